'use strict';

const test = require('node:test');
const assert = require('node:assert');

const { slugify } = require('..');

test('lowercases and joins words with dashes', () => {
  assert.strictEqual(slugify('Hello World'), 'hello-world');
});

test('keeps digits', () => {
  assert.strictEqual(slugify('Top 10 tips'), 'top-10-tips');
});

test('uses a custom separator', () => {
  assert.strictEqual(slugify('Hello World', { separator: '_' }), 'hello_world');
});

test('collapses runs of spaces and punctuation into one separator', () => {
  assert.strictEqual(slugify('Hello,   World!!  Again'), 'hello-world-again');
  assert.strictEqual(slugify('a - b', { separator: '_' }), 'a_b');
});

test('never starts or ends with a separator', () => {
  assert.strictEqual(slugify('  --Hello--  '), 'hello');
  assert.strictEqual(slugify('(draft) Notes.'), 'draft-notes');
});

test('folds accented letters to ASCII', () => {
  assert.strictEqual(slugify('Crème Brûlée à la carte'), 'creme-brulee-a-la-carte');
  assert.strictEqual(slugify('Ångström Señor'), 'angstrom-senor');
});

test('drops characters that have no ASCII form', () => {
  assert.strictEqual(slugify('日本語 guide'), 'guide');
  assert.strictEqual(slugify('!!!'), '');
});

test('maxLength cuts at the last word that fits', () => {
  assert.strictEqual(slugify('The quick brown fox', { maxLength: 12 }), 'the-quick');
  assert.strictEqual(slugify('The quick brown fox', { maxLength: 15 }), 'the-quick-brown');
  assert.strictEqual(slugify('one two', { separator: '__', maxLength: 6 }), 'one');
});

test('maxLength cuts a first word that is too long on its own', () => {
  assert.strictEqual(slugify('Supercalifragilistic day', { maxLength: 5 }), 'super');
});

test('maxLength longer than the slug changes nothing', () => {
  assert.strictEqual(slugify('Hello World', { maxLength: 100 }), 'hello-world');
});

test('maxLength must be a positive integer', () => {
  for (const maxLength of [0, -3, 2.5, '10', NaN]) {
    assert.throws(() => slugify('Hello', { maxLength }), RangeError, `maxLength ${String(maxLength)}`);
  }
});
