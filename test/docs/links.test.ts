// Every relative link in the docs (docs/*.md, compose/README.md) points at a
// file that exists, so a rename cannot leave a dead link behind.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/tools.js';

describe('docs links', () => {
  it('relative links resolve to files in the repository', () => {
    const root = repoRoot();
    const pages = [
      ...readdirSync(path.join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join(root, 'docs', f)),
      path.join(root, 'compose', 'README.md'),
    ];
    const dead: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8');
      for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(path.resolve(path.dirname(page), target))) dead.push(`${path.relative(root, page)} -> ${target}`);
      }
    }
    assert.deepEqual(dead, []);
  });
});
