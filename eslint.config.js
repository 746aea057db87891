// Lint: typescript-eslint's recommended rules over the sources, tests, benchmarks and examples.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config({ ignores: ['node_modules/', '**/.tablebase/', 'coverage/', '**/tablebase-client.ts'] }, js.configs.recommended, ...tseslint.configs.recommended, {
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
    // Definitions are deliberately generic over any table (`Table<any>`); the compiled model narrows them.
    '@typescript-eslint/no-explicit-any': 'error',
    '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
  },
});
