/**
 * The code block languages Zulip's Pygments knows, by the aliases people type after ```, with the
 * lexer's display name (what `data-code-language` says) and the highlight.js grammar that
 * tokenizes it (none: shown unhighlighted, as Pygments' plain-text lexer would).
 */
const LANGUAGES: Array<[pygmentsName: string, grammar: string | null, aliases: string[]]> = [
  ["Python", "python", ["python", "py", "python3", "py3", "sage", "bazel", "starlark"]],
  ["Python 2.x", "python", ["python2", "py2"]],
  ["Python console session", "python-repl", ["pycon", "python-console"]],
  ["JavaScript", "javascript", ["javascript", "js"]],
  ["JSX", "javascript", ["jsx", "react"]],
  ["TypeScript", "typescript", ["typescript", "ts"]],
  ["TSX", "typescript", ["tsx"]],
  ["CoffeeScript", "coffeescript", ["coffeescript", "coffee-script", "coffee"]],
  ["Bash", "bash", ["bash", "sh", "ksh", "zsh", "shell", "openrc"]],
  ["Bash Session", "shell", ["console", "shell-session"]],
  ["PowerShell", "powershell", ["powershell", "pwsh", "posh", "ps1", "psm1"]],
  ["Batchfile", "dos", ["batch", "bat", "dosbatch", "winbatch"]],
  ["C", "c", ["c"]],
  ["C++", "cpp", ["cpp", "c++"]],
  ["C#", "csharp", ["csharp", "c#", "cs"]],
  ["Objective-C", "objectivec", ["objective-c", "objectivec", "obj-c", "objc"]],
  ["Java", "java", ["java"]],
  ["Kotlin", "kotlin", ["kotlin"]],
  ["Scala", "scala", ["scala"]],
  ["Groovy", "groovy", ["groovy"]],
  ["Go", "go", ["go", "golang"]],
  ["Rust", "rust", ["rust", "rs"]],
  ["Swift", "swift", ["swift"]],
  ["Dart", "dart", ["dart"]],
  ["D", "d", ["d"]],
  ["Nimrod", "nim", ["nimrod", "nim"]],
  ["Crystal", "crystal", ["crystal", "cr"]],
  ["Ruby", "ruby", ["ruby", "rb", "duby"]],
  ["PHP", "php", ["php", "php3", "php4", "php5"]],
  ["Perl", "perl", ["perl", "pl"]],
  ["Lua", "lua", ["lua"]],
  ["Tcl", "tcl", ["tcl"]],
  // Pygments' lexer for R is its S lexer.
  ["S", "r", ["splus", "s", "r"]],
  ["Julia", "julia", ["julia", "jl"]],
  ["Matlab", "matlab", ["matlab"]],
  ["Mathematica", "mathematica", ["mathematica", "mma", "nb"]],
  ["Fortran", "fortran", ["fortran", "f90"]],
  ["Delphi", "delphi", ["delphi", "pas", "pascal", "objectpascal"]],
  ["VB.net", "vbnet", ["vb.net", "vbnet", "lobas", "oobas", "sobas", "visual-basic", "visualbasic"]],
  ["Ada", "ada", ["ada", "ada95", "ada2005"]],
  ["Haskell", "haskell", ["haskell", "hs"]],
  ["Elm", "elm", ["elm"]],
  ["OCaml", "ocaml", ["ocaml"]],
  ["ReasonML", "reasonml", ["reasonml", "reason"]],
  ["Standard ML", "sml", ["sml"]],
  ["F#", "fsharp", ["fsharp", "f#"]],
  ["Elixir", "elixir", ["elixir", "ex", "exs"]],
  ["Erlang", "erlang", ["erlang"]],
  ["Clojure", "clojure", ["clojure", "clj"]],
  ["Scheme", "scheme", ["scheme", "scm"]],
  ["Common Lisp", "lisp", ["common-lisp", "cl", "lisp"]],
  ["Prolog", "prolog", ["prolog"]],
  ["Coq", "coq", ["coq"]],
  ["Smalltalk", "smalltalk", ["smalltalk", "squeak", "st"]],
  ["NASM", "x86asm", ["nasm"]],
  ["LLVM", "llvm", ["llvm"]],
  ["GLSL", "glsl", ["glsl"]],
  ["Arduino", "arduino", ["arduino"]],
  ["verilog", "verilog", ["verilog", "v"]],
  ["vhdl", "vhdl", ["vhdl"]],
  ["HTML", "xml", ["html"]],
  ["XML", "xml", ["xml"]],
  ["CSS", "css", ["css"]],
  ["SCSS", "scss", ["scss"]],
  ["LessCss", "less", ["less"]],
  ["Django/Jinja", "django", ["django", "jinja"]],
  ["ERB", "erb", ["erb"]],
  ["Twig", "twig", ["twig"]],
  ["Handlebars", "handlebars", ["handlebars"]],
  ["Haml", "haml", ["haml"]],
  ["JSON", "json", ["json", "json-object"]],
  // `yml` may not be among Pygments' own aliases for YAML; it is named YAML here all the same.
  ["YAML", "yaml", ["yaml", "yml"]],
  ["TOML", "ini", ["toml"]],
  ["INI", "ini", ["ini", "cfg", "dosini"]],
  ["Properties", "properties", ["properties", "jproperties"]],
  ["SQL", "sql", ["sql"]],
  ["PostgreSQL SQL dialect", "pgsql", ["postgresql", "postgres"]],
  ["MySQL", "sql", ["mysql"]],
  ["GraphQL", "graphql", ["graphql"]],
  ["Protocol Buffer", "protobuf", ["protobuf", "proto"]],
  ["Markdown", "markdown", ["markdown", "md"]],
  ["TeX", "latex", ["tex", "latex"]],
  ["reStructuredText", null, ["restructuredtext", "rst", "rest"]],
  ["Diff", "diff", ["diff", "udiff"]],
  ["Docker", "dockerfile", ["dockerfile", "docker"]],
  ["Makefile", "makefile", ["makefile", "make", "mf", "bsdmake"]],
  ["CMake", "cmake", ["cmake"]],
  ["Nginx configuration file", "nginx", ["nginx"]],
  ["ApacheConf", "apache", ["apacheconf", "aconf", "apache"]],
  ["HTTP", "http", ["http"]],
  ["Nix", "nix", ["nixos", "nix"]],
  ["Awk", "awk", ["awk", "gawk", "mawk", "nawk"]],
  ["VimL", "vim", ["vim"]],
  ["Gherkin", "gherkin", ["gherkin", "cucumber"]],
  ["Text only", null, ["text"]],
];

/** The highlight.js grammars the table uses, for the highlighting thread to load. */
export const HLJS_GRAMMARS: string[] = [...new Set(LANGUAGES.flatMap(([, grammar]) => (grammar === null ? [] : [grammar])))];

export interface CodeLanguage {
  /** Pygments' name for the language, or the user's own word when Pygments has none. */
  name: string;
  /** The registered highlight.js grammar, or null: no highlighting. */
  grammar: string | null;
}

const BY_ALIAS = new Map<string, CodeLanguage>();
for (const [name, grammar, aliases] of LANGUAGES) for (const alias of aliases) BY_ALIAS.set(alias, { name, grammar });

/** What a fence's language word means: Pygments' aliases match whatever the case. */
export function lookupCodeLanguage(word: string): CodeLanguage {
  return BY_ALIAS.get(word.toLowerCase()) ?? { name: word, grammar: null };
}
