/** The project-definition API. Imports nothing from the server. */
export { column, Column } from './columns.js';
export type { ColumnMap, ColumnSpec, ColumnKind, RowOf, CreateOf, Json } from './columns.js';
export { table, authTable, Table, ColumnRef } from './table.js';
export type { AnyTable, TableOptions, AuthOptions, AuthExtras, TableRules, RowRules, TableHooks, CustomHandler, CustomRequest, AuthRules, AuthHooks } from './table.js';
export { view, View } from './view.js';
export type { AnyView, ViewOptions, ViewJoin } from './view.js';
export { defineProject } from './project.js';
export type {
  Project,
  ProjectDefinition,
  ProjectSettings,
  ProjectHooks,
  ProjectSchema,
  SchemaOf,
  PhotoOptions,
  PhotoRow,
  CronJob,
  EmailOptions,
  ServerOptions,
  AuthSettings,
  OpenApiInfo,
} from './project.js';
export type {
  SignInMethod,
  SignInInfo,
  OtpOptions,
  OAuthEndpoints,
  OAuthProviderOptions,
  OidcProviderOptions,
  GoogleProviderOptions,
  MicrosoftProviderOptions,
  AppleProviderOptions,
  GitHubProviderOptions,
  SignInOptions,
} from './signin.js';
export { pushFromEnv } from './push.js';
export type { PushOptions, WebPushOptions, FcmOptions, ApnsOptions } from './push.js';
export { UserError, NotFoundError } from './errors.js';
export type * from './types.js';
