/**
 * Tests import project configs (`examples/conformance/tablebase.config.ts`) that import
 * `tablebase`: in a checkout that is this repository's sources, not the compiled `dist/` the
 * package's `exports` name (absent until `npm run build`). Both vitest configs use this.
 */
import { fileURLToPath } from 'node:url';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export const alias = [
  { find: /^tablebase$/, replacement: source('./src/index.ts') },
  { find: /^tablebase\/client$/, replacement: source('./src/client/index.ts') },
];
