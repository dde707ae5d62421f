import { describe, expect, it } from "vitest";
import { controlEscape, escapeControls, isControl, jsonWithoutControls } from "../../agent/control-chars.js";

describe("control characters", () => {
  it("are exactly U+0000-U+001F, U+007F and U+0080-U+009F", () => {
    const controls = Array.from({ length: 0x110 }, (_, c) => c).filter(isControl);
    expect(controls).toEqual([...Array.from({ length: 0x20 }, (_, c) => c), ...Array.from({ length: 0x21 }, (_, c) => 0x7f + c)]);
    expect([0x1f, 0x20, 0x7e, 0x7f, 0x9f, 0xa0, 0xfffd].map((c) => controlEscape(c))).toEqual([
      "\\x1f",
      undefined,
      undefined,
      "\\x7f",
      "\\x9f",
      undefined,
      undefined,
    ]);
  });

  it("each is written \\xNN; the rest, and a string without any, are left as they are", () => {
    expect(escapeControls("a\u001b[31mb\u0007\r\n\u007f\u0085\u00a0ü\ufffd")).toBe("a\\x1b[31mb\\x07\\x0d\\x0a\\x7f\\x85\u00a0ü\ufffd");
    expect(escapeControls("two\nlines\r\n", true)).toBe("two\nlines\\x0d\n");
    const clean = "mlx5_0 0x49bbd7790311d5eb node-a:4242";
    expect(escapeControls(clean)).toBe(clean);
    expect(escapeControls("")).toBe("");
  });

  it("JSON keeps its value and loses its raw DEL and C1 controls", () => {
    const value = { path: "x\u001b\u007f\u0085\u009f\u00a0.log" };
    const text = jsonWithoutControls(JSON.stringify(value));
    expect(text).toBe('{"path":"x\\u001b\\u007f\\u0085\\u009f\u00a0.log"}');
    expect(JSON.parse(text)).toEqual(value);
  });
});
