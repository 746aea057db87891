/**
 * Email templates (docs/reference/dashboard.md): the built-ins plus the project's own files. A template
 * named `welcome` is `welcome.subject`, `welcome.txt` and `welcome.html` in the project's
 * templates folder; `.subject` is optional, and at least one of `.txt` / `.html` must exist.
 * Project files named `verifyEmail` / `resetPassword` override the built-ins; a project that
 * ships only `verifyEmail.subject` keeps the built-in bodies with its own subject.
 *
 * Names arrive from `POST /email` bodies, so they are checked against a strict pattern (no
 * dots, no slashes) before any path is built, and the built path is checked to stay inside the
 * folder. Files are read on every send so edits show up in `tablebase dev` without a restart.
 */
import { open } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { ApiError, badRequest } from '../core/errors.js';
import { BUILTIN_TEMPLATES, isBuiltinTemplateName } from './builtin-templates.js';
import type { EmailTemplate } from './render.js';

export { BUILTIN_TEMPLATES, BUILTIN_TEMPLATE_NAMES, type BuiltinTemplateName } from './builtin-templates.js';
export { renderTemplate, renderString, escapeHtml, cleanSubject, type EmailTemplate, type RenderedEmail, type TemplateVariables } from './render.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/** Template files are developer-written; a cap keeps a mistaken huge file from filling memory. */
const MAX_TEMPLATE_BYTES = 1024 * 1024;

export function isTemplateName(name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name);
}

export class TemplateStore {
  readonly #dir: string | undefined;

  /** `dir`: the project's templates folder (absolute, or relative to the process cwd); optional. */
  constructor(dir?: string) {
    this.#dir = dir === undefined ? undefined : resolve(dir);
  }

  /**
   * The named template: the project's files first, then the built-ins. Throws 400 for a name
   * that is not a plain name and 404 when no template of that name exists.
   */
  async load(name: string): Promise<EmailTemplate> {
    if (!isTemplateName(name)) throw badRequest('/template', 'must be a template name of letters, digits, "-" and "_"');
    const own = this.#dir === undefined ? undefined : await this.#readProject(this.#dir, name);
    const builtin = isBuiltinTemplateName(name) ? BUILTIN_TEMPLATES[name] : undefined;
    if (!own) {
      if (builtin) return { ...builtin };
      throw new ApiError('NOT_FOUND', 'Unknown email template');
    }
    const hasBody = own.text !== undefined || own.html !== undefined;
    if (!hasBody && !builtin) throw new ApiError('NOT_FOUND', 'Email template has neither a .txt nor an .html file');
    const template: EmailTemplate = hasBody ? { ...own } : { ...own, text: builtin!.text, html: builtin!.html };
    if (template.subject === undefined && builtin) template.subject = builtin.subject;
    return template;
  }

  async #readProject(dir: string, name: string): Promise<EmailTemplate | undefined> {
    const [subject, text, html] = await Promise.all([readOptional(dir, `${name}.subject`), readOptional(dir, `${name}.txt`), readOptional(dir, `${name}.html`)]);
    if (subject === undefined && text === undefined && html === undefined) return undefined;
    const template: EmailTemplate = {};
    if (subject !== undefined) template.subject = subject;
    if (text !== undefined) template.text = text;
    if (html !== undefined) template.html = html;
    return template;
  }
}

/** The file's text, or undefined when it does not exist. */
async function readOptional(dir: string, file: string): Promise<string | undefined> {
  const path = join(dir, file);
  // Defence in depth behind the name pattern: the path must stay directly inside the folder.
  if (!path.startsWith(dir.endsWith(sep) ? dir : dir + sep)) throw badRequest('/template', 'must be a template name of letters, digits, "-" and "_"');
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    if (stats.size > MAX_TEMPLATE_BYTES) throw new Error(`Email template file ${file} is larger than ${MAX_TEMPLATE_BYTES} bytes`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
