// The DOM helper the API reference (docs.js) and the operator console (console.js) share. The pages
// load their scripts as ES modules from this origin (the CSP allows script-src 'self', nothing
// inline), and both import this one.

/**
 * Creates an element with attributes and children. Strings and numbers become text, never markup;
 * undefined, null and false attributes or children are left out.
 */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return node;
}
