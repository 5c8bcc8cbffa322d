'use strict';

/**
 * Turn a title into a URL slug: lowercase ASCII letters and digits, words joined by `separator`.
 *
 *   slugify('Hello World')                      // 'hello-world'
 *   slugify('Hello World', { separator: '_' })  // 'hello_world'
 *
 * @param {string} title
 * @param {{separator?: string}} [options]
 * @returns {string}
 */
function slugify(title, options = {}) {
  const separator = options.separator ?? '-';
  return String(title)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, separator);
}

module.exports = { slugify };
