'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const read = (name) => fs.readFileSync(path.join(root, name), 'utf8');

test('greet still works', () => {
  const { greet } = require('..');
  assert.strictEqual(greet('Ada'), 'Hello, Ada!');
  assert.strictEqual(greet(), 'Hello, world!');
});

test('package.json has the next patch version', () => {
  const pkg = JSON.parse(read('package.json'));
  assert.strictEqual(pkg.version, '1.2.4');
});

test('CHANGELOG.md has a 1.2.4 entry above 1.2.3', () => {
  const log = read('CHANGELOG.md');
  const next = log.search(/^##\s+\[?v?1\.2\.4\b/m);
  const prev = log.search(/^##\s+\[?v?1\.2\.3\b/m);
  assert.ok(next !== -1, 'CHANGELOG.md has no "## 1.2.4" heading');
  assert.ok(prev !== -1, 'the "## 1.2.3" entry is gone from CHANGELOG.md');
  assert.ok(next < prev, 'the 1.2.4 entry must come before (above) 1.2.3');
  const body = log.slice(log.indexOf('\n', next) + 1, prev);
  assert.ok(body.trim().length > 0, 'the 1.2.4 entry says nothing about the release');
});
