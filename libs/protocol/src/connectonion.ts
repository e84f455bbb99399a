/**
 * The JSON the ConnectOnion clients sign, byte for byte: Python's
 * `json.dumps(msg, sort_keys=True)`. ANNOUNCE uses the default separators `", "` / `": "` with
 * `ensure_ascii` on; CONNECT and commands the compact `","` / `":"`.
 */
export interface CanonicalStyle {
  /** `", "` and `": "` (Python's defaults) or `","` and `":"`. */
  spaced: boolean;
  /** Python's `ensure_ascii`: every character outside U+0020–U+007E as lowercase `\uXXXX`. */
  ascii: boolean;
}

// Shared by the relay (services/agents) and the Gofers published on it (services/gofers).
export const ANNOUNCE_STYLE: CanonicalStyle = { spaced: true, ascii: true };
export const COMMAND_STYLE: CanonicalStyle = { spaced: false, ascii: true };

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

const hex4 = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;

function str(s: string, ascii: boolean): string {
  let out = '"';
  // Iterating UTF-16 code units gives Python's surrogate pairs for astral characters.
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const code = s.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short) out += short;
    else if (code < 0x20 || (ascii && code > 0x7e)) out += hex4(code);
    else out += ch;
  }
  return `${out}"`;
}

/** Code-point order, as Python sorts `str` keys (differs from UTF-16 order only past U+FFFF). */
const byCodePoint = (a: string, b: string): number => {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

/**
 * `value` serialized as Python would. Numbers come from JSON.parse, so a float written as `1.0`
 * reads back as 1 and is written `1`: a signed message with such a float does not verify (no
 * client sends one in the signed fields).
 */
export function canonicalJson(value: unknown, style: CanonicalStyle): string {
  const comma = style.spaced ? ', ' : ',';
  const colon = style.spaced ? ': ' : ':';
  const write = (v: unknown): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'string') return str(v, style.ascii);
    if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (Array.isArray(v)) return `[${v.map(write).join(comma)}]`;
    if (typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).sort(byCodePoint);
      return `{${keys.map((k) => `${str(k, style.ascii)}${colon}${write(o[k])}`).join(comma)}}`;
    }
    return 'null';
  };
  return write(value);
}
