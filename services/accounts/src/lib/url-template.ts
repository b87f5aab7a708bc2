/**
 * RFC 6570 URI template validation (levels 1-4): literals without forbidden characters, and
 * expressions `{op var[:n|*],...}`. Returns the variable names, or null when invalid.
 */
const OPERATORS = new Set(["+", "#", ".", "/", ";", "?", "&"]);
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$/;
const MODIFIER = /^(?::[1-9][0-9]{0,3}|\*)?$/;
// Characters RFC 6570 forbids in literals (plus controls and space); '%' only as pct-encoding.
const BAD_LITERAL = /[\u0000-\u0020"'<>\\^`{|}\u007f]|%(?![0-9A-Fa-f]{2})/;

export function parseUrlTemplate(template: string): string[] | null {
  const names: string[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf("{", i);
    const literal = template.slice(i, open === -1 ? undefined : open);
    if (BAD_LITERAL.test(literal.replace(/}/g, "{"))) return null;
    if (open === -1) break;
    const close = template.indexOf("}", open);
    if (close === -1) return null;
    let body = template.slice(open + 1, close);
    if (body.includes("{")) return null;
    if (body && OPERATORS.has(body[0])) body = body.slice(1);
    if (!body) return null;
    for (const spec of body.split(",")) {
      const m = /^([^:*]*)(.*)$/.exec(spec)!;
      if (!VARNAME.test(m[1]) || !MODIFIER.test(m[2])) return null;
      names.push(m[1]);
    }
    i = close + 1;
  }
  return names;
}
