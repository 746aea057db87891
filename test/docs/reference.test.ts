/**
 * docs/reference/ stays true: the generated pages (routes, CLI, errors) equal what the code would
 * generate now, and every relative link of the reference and the README names a file that exists
 * (and, for `page.md#anchor`, a heading or `<a id>` of that page).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { referencePages } from '../../scripts/reference/pages.js';
import { ROOT } from '../helpers/server.js';

const REF = join(ROOT, 'docs/reference');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/^#+ (.+)$/gm)) out.add(slug(m[1]!));
  for (const m of text.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
  return out;
}

function brokenLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  const broken: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/.test(target)) continue;
    const [path, anchor] = target.split('#');
    const full = path ? resolve(dirname(file), path) : file;
    if (!existsSync(full)) broken.push(target);
    else if (anchor && full.endsWith('.md') && !anchorsOf(full).has(anchor)) broken.push(target);
  }
  return broken;
}

describe('docs/reference', () => {
  it('generated pages match the code (run `npm run docs:reference` after changing routes, commands or errors)', async () => {
    const pages = await referencePages();
    for (const [name, text] of Object.entries(pages)) expect(readFileSync(join(REF, name), 'utf8'), name).toBe(text);
  }, 60_000);

  it('every relative link of the reference pages and the README resolves', () => {
    const files = [
      ...readdirSync(REF)
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(REF, f)),
      join(ROOT, 'README.md'),
    ];
    const broken = files.flatMap((f) => brokenLinks(f).map((l) => `${f.slice(ROOT.length + 1)} → ${l}`));
    expect(broken).toEqual([]);
  });

  it('the README links the reference', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('docs/reference/README.md');
  });
});
