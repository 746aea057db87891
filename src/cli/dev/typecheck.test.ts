import { describe, expect, it } from 'vitest';
import { parseTscOutput } from './typecheck.js';

describe("dev's type-check report", () => {
  it('reads file, line, column and message from tsc --pretty false, joining continuation lines', () => {
    const out = [
      "tablebase.config.ts(28,43): error TS2339: Property 'author' does not exist on type 'Row'.",
      "src/a.ts(3,1): error TS2322: Type 'string' is not assignable to type 'number'.",
      "  Types of property 'x' are incompatible.",
    ].join('\n');
    expect(parseTscOutput(out, '/p')).toEqual([
      { file: 'tablebase.config.ts', line: 28, column: 43, message: "TS2339: Property 'author' does not exist on type 'Row'." },
      { file: 'src/a.ts', line: 3, column: 1, message: "TS2322: Type 'string' is not assignable to type 'number'. Types of property 'x' are incompatible." },
    ]);
  });

  it('finds nothing in a clean run', () => {
    expect(parseTscOutput('', '/p')).toEqual([]);
  });
});
