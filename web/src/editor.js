// The formula editor: CodeMirror 6 with a stream highlighter for the formula language (the
// tokens of grammar/formula.lark: strings in " or ', numbers incl. 5%, TRUE/FALSE/NULL,
// AND/OR/NOT, function names before "(", {braced names}, /* comments */, error values such as
// #N/A), bracket matching, history, and the hooks each page adds (diagnostics, completion,
// hover). Tab is not bound, so Tab and Shift-Tab leave the editor as on any form field.
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, drawSelection, highlightActiveLine, placeholder as ph } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { StreamLanguage, syntaxHighlighting, HighlightStyle, bracketMatching } from "@codemirror/language";
import { tags as t } from "@lezer/highlight";

const formulaLanguage = StreamLanguage.define({
  name: "formula",
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo("*/")) { stream.pos += 2; state.inComment = false; } else stream.skipToEnd();
      return "comment";
    }
    if (stream.eatSpace()) return null;
    if (stream.match("/*")) { state.inComment = true; return "comment"; }
    if (stream.match(/^"(?:[^"]|"")*"?/) || stream.match(/^'(?:[^']|'')*'?/)) return "string";
    if (stream.match(/^#(?:DIV\/0!|N\/A|VALUE!|REF!|NAME\?|NUM!|NULL!|SPILL!|CALC!|[A-Z]+[!?]?)/)) return "atom";
    if (stream.match(/^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?%?/)) return "number";
    if (stream.match(/^(?:true|false|null)(?!\w)/i)) return "bool";
    if (stream.match(/^(?:and|or|not)(?!\w)/i)) return "keyword";
    if (stream.match(/^\{[^}]*\}/)) return "variableName.special";
    const fn = stream.match(/^[^\W\d][\w]*(?:\.[^\W\d]\w*){0,3}(?=\s*\()/u);
    if (fn) return /^(?:LET|LAMBDA|IF|IFS|SWITCH|IFERROR|IFNA)$/i.test(fn[0]) ? "keyword" : "function(variableName)";
    if (stream.match(/^[^\W\d]\w*/u)) return "variableName";
    if (stream.match(/^(?:=>|==|<>|!=|<=|>=|\?\?|&&|\|\||[-+*/^&%=<>!])/)) return "operator";
    if (stream.match(/^[()[\],.]/)) return "punctuation";
    stream.next();
    return "invalid";
  },
  languageData: { closeBrackets: { brackets: ["(", "[", "{", '"'] } },
});

const highlight = HighlightStyle.define([
  { tag: t.string, color: "#0a6b2b" },
  { tag: t.number, color: "#8a3b00" },
  { tag: [t.bool, t.atom], color: "#7a1f7a", fontWeight: "600" },
  { tag: t.keyword, color: "#1f4e79", fontWeight: "700" },
  { tag: t.function(t.variableName), color: "#1f4e79" },
  { tag: t.special(t.variableName), color: "#5c3c00" },
  { tag: t.variableName, color: "#222" },
  { tag: t.operator, color: "#444" },
  { tag: t.comment, color: "#5f6b75", fontStyle: "italic" },
  { tag: t.invalid, color: "#b00020", textDecoration: "underline wavy" },
]);

export function createEditor(parent, { doc = "", label = "Formula", extensions = [], onChange, onSelect, placeholder } = {}) {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        history(),
        drawSelection(),
        highlightActiveLine(),
        bracketMatching(),
        formulaLanguage,
        syntaxHighlighting(highlight),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": label, "aria-multiline": "true", spellcheck: "false", autocapitalize: "off" }),
        placeholder ? ph(placeholder) : [],
        ...extensions,
        keymap.of([...historyKeymap, ...defaultKeymap]),
        EditorView.updateListener.of((u) => {
          if (u.docChanged && onChange) onChange(u);
          else if (u.selectionSet && onSelect) onSelect(u);
        }),
      ],
    }),
  });
  return view;
}

export function setDoc(view, text) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}
