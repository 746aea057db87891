/** Public entry: `import { defineProject, table, column } from 'tablebase'`. */
export * from './define/index.js';
