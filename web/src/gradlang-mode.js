// gradlang's highlighting for CodeMirror: the same classes of words as gradlang/shell/lexer.py
// (keywords, stop_gradient and the core builtins, other builtins, constants, numbers, comments).
import { HighlightStyle, StreamLanguage, syntaxHighlighting } from "@codemirror/language";
import { Tag } from "@lezer/highlight";

const stopTag = Tag.define();

// stop_gradient stands out in the editor as in the results: bold magenta.
export const stopHighlighting = syntaxHighlighting(HighlightStyle.define([
  { tag: stopTag, color: "#b4009e", fontWeight: "bold" },
]));

export function gradlangLanguage(words) {
  const core = new Set(words.core), builtins = new Set(words.builtins), constants = new Set(words.constants);
  return StreamLanguage.define({
    name: "gradlang",
    token(stream) {
      if (stream.eatSpace()) return null;
      if (stream.match(/^#.*/)) return "comment";
      if (stream.match(/^(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?/)) return "number";
      const word = stream.match(/^[A-Za-z_]\w*/);
      if (word) {
        const name = word[0];
        if (name === "stop_gradient" || name === "sg") return "stop";
        if (name === "at" || name === "explain") return "keyword";
        if (name === "R") return "typeName";
        if (core.has(name)) return "atom";
        if (builtins.has(name)) return "builtin";
        if (constants.has(name)) return "string";
        return stream.match(/^\s*\(/, false) ? "variableName.function" : "variableName";
      }
      if (stream.match(/^(<=|>=|==|!=|\*\*|[-+*\/@^<>=])/)) return "operator";
      stream.next();
      return "punctuation";
    },
    tokenTable: { stop: stopTag },
  });
}
