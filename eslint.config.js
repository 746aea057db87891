// Lint: typescript-eslint's recommended rules over the sources, tests, benchmarks and examples.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '**/.tablebase/', 'coverage/', '**/tablebase-client.ts', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        queueMicrotask: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        AbortController: 'readonly',
        structuredClone: 'readonly',
      },
    },
    rules: {
      // No `any` (issue #10 item 6): use generics or `unknown` and narrow. Erased shapes are `AnyTable`,
      // `AnyView` and `UntypedRow` (src/define); a deliberate exception carries an eslint-disable with its reason.
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Storage owns every database difference (issue #20): the editor says so as you type; `npm test`
    // enforces it with scripts/check-storage-boundary.ts (the same rule, parsed by TypeScript).
    files: ['src/**/*.ts'],
    ignores: ['src/storage/**', '**/*.test.ts', '**/test-support.ts', '**/test-fixtures.ts', '**/store-conformance.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='name'][object.property.name='dialect']", message: 'dialect.name outside src/storage/: ask a Dialect capability instead.' },
        { selector: "MemberExpression[property.name='name'][object.name='dialect']", message: 'dialect.name outside src/storage/: ask a Dialect capability instead.' },
        {
          selector: 'Literal[value=/\\b(SELECT\\b[\\s\\S]*\\bFROM|INSERT\\s+INTO|DELETE\\s+FROM|ON\\s+CONFLICT|SKIP\\s+LOCKED)\\b/]',
          message: 'SQL text outside src/storage/: add a repository in src/storage/repos/.',
        },
        {
          selector: 'TemplateElement[value.raw=/\\b(SELECT\\b[\\s\\S]*\\bFROM|INSERT\\s+INTO|DELETE\\s+FROM|ON\\s+CONFLICT|SKIP\\s+LOCKED)\\b/]',
          message: 'SQL text outside src/storage/: add a repository in src/storage/repos/.',
        },
      ],
    },
  },
);
