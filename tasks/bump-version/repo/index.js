'use strict';

const { version } = require('./package.json');

function greet(name) {
  return `Hello, ${name || 'world'}!`;
}

module.exports = { greet, version };
