// Lint: typescript-eslint's recommended rules over the sources, tests, benchmarks and examples.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config({ ignores: ['node_modules/', '**/.tablebase/', 'coverage/', '**/tablebase-client.ts', 'dist/'] }, js.configs.recommended, ...tseslint.configs.recommended, {
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
});
