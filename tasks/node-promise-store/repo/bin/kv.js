#!/usr/bin/env node
'use strict';

// kv FILE get KEY | set KEY JSON | delete KEY | keys

const { open } = require('../lib/store');

function fail(err) {
  process.stderr.write(`kv: ${err.message}\n`);
  process.exitCode = 1;
}

function main(argv) {
  const [file, command, key, value] = argv;
  if (!file || !['get', 'set', 'delete', 'keys'].includes(command)) {
    fail(new Error('usage: kv FILE get KEY | set KEY JSON | delete KEY | keys'));
    return;
  }
  open(file, (err, store) => {
    if (err) {
      fail(err);
      return;
    }
    if (command === 'get') {
      store.get(key, (getErr, found) => {
        if (getErr) {
          fail(getErr);
          return;
        }
        process.stdout.write(`${JSON.stringify(found)}\n`);
      });
    } else if (command === 'set') {
      let parsed;
      try {
        parsed = JSON.parse(value);
      } catch (parseErr) {
        fail(new Error(`value is not JSON: ${value}`));
        return;
      }
      store.set(key, parsed, (setErr) => {
        if (setErr) fail(setErr);
      });
    } else if (command === 'delete') {
      store.delete(key, (deleteErr) => {
        if (deleteErr) fail(deleteErr);
      });
    } else {
      store.keys((keysErr, keys) => {
        if (keysErr) {
          fail(keysErr);
          return;
        }
        for (const name of keys) process.stdout.write(`${name}\n`);
      });
    }
  });
}

main(process.argv.slice(2));
