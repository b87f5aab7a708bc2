/**
 * Zulip's widgets (zerver/lib/widget.py and validator.py): a message whose first word is `/poll`
 * or `/todo` starts one, kept as the message's first submessage; clients then add submessages
 * (votes, options, tasks), each checked against the widget's kind. Pure.
 */

export type WidgetType = "poll" | "todo";

export interface WidgetData {
  /** `zform` only from a bot's answer (widgetContentOf): forms whose choices send a reply. */
  widget_type: WidgetType | "zform";
  extra_data: Record<string, unknown>;
}

/** A list item's marker (`- `, `* `) and the spaces around it, as Zulip strips them. */
const stripListMarker = (line: string) => line.trim().replace(/^\s*[-*]?\s*/, "");

/** The widget a message's content starts, or null (Zulip's get_widget_data). */
export function widgetOf(content: string): WidgetData | null {
  // Every send asks: most messages are answered without looking past their first characters.
  if (!content.startsWith("/poll") && !content.startsWith("/todo")) return null;
  const first = content.split(/\s+/, 1)[0];
  if (first !== "/poll" && first !== "/todo") return null;
  const lines = content.replace(first, "").split(/\r\n|\r|\n/);
  const title = lines.length > 0 && lines[0] ? lines.shift()!.trim() : "";
  const items = lines.map(stripListMarker).filter((item) => item.length > 0);
  if (first === "/poll") return { widget_type: "poll", extra_data: { question: title, options: items } };
  // A task and its description are separated by the first colon.
  const tasks = items.map((item) => {
    const at = item.indexOf(":");
    return at < 0 ? { task: item.trim(), desc: "" } : { task: item.slice(0, at).trim(), desc: item.slice(at + 1).trim() };
  });
  return { widget_type: "todo", extra_data: { task_list_title: title, tasks } };
}

/**
 * The widget an outgoing webhook's answer asks for (its `widget_content`, a JSON string or the
 * object itself), as Zulip's check_widget_content allows: only a zform of choices, each with a
 * short name, a long name and the reply a click sends. Throws the complaint a client would see.
 */
export function widgetContentOf(value: unknown): WidgetData {
  let widget = value;
  if (typeof value === "string") {
    try {
      widget = JSON.parse(value);
    } catch {
      throw new Error("Widgets: API programmer sent invalid JSON content");
    }
  }
  const problem = widgetContentProblem(widget);
  if (problem) throw new Error(`Widgets: ${problem}`);
  return widget as WidgetData;
}

const isDict = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function widgetContentProblem(widget: unknown): string | null {
  if (!isDict(widget)) return "widget_content is not a dict";
  if (!("widget_type" in widget)) return "widget_type is not in widget_content";
  if (!("extra_data" in widget)) return "extra_data is not in widget_content";
  const data = widget.extra_data;
  if (!isDict(data)) return "extra_data is not a dict";
  if (widget.widget_type !== "zform") return `unknown widget type: ${String(widget.widget_type)}`;
  if (!("type" in data)) return "zform is missing type field";
  if (data.type !== "choices") return `unknown zform type: ${String(data.type)}`;
  if (typeof data.heading !== "string") return 'extra_data["heading"] is not a string';
  if (!Array.isArray(data.choices)) return 'extra_data["choices"] is not a list';
  for (const [i, choice] of data.choices.entries()) {
    if (!isDict(choice)) return `extra_data["choices"][${i}] is not a dict`;
    for (const key of ["short_name", "long_name", "reply"]) {
      if (typeof choice[key] !== "string") return `extra_data["choices"][${i}]["${key}"] is not a string`;
    }
  }
  return null;
}

/** The kind of widget a message's first submessage started, if any. */
export function widgetTypeOf(first: { msg_type: string; content: string } | null): WidgetType | null {
  if (!first || first.msg_type !== "widget") return null;
  try {
    const type = (JSON.parse(first.content) as { widget_type?: unknown }).widget_type;
    return type === "poll" || type === "todo" ? type : null;
  } catch {
    return null;
  }
}

type Check = "string" | "int" | "bool";
const CHECKS: Record<Check, [(v: unknown) => boolean, string]> = {
  string: [(v) => typeof v === "string", "is not a string"],
  int: [(v) => typeof v === "number" && Number.isInteger(v), "is not an integer"],
  bool: [(v) => typeof v === "boolean", "is not a boolean"],
};

/** Zulip's check_dict_only: exactly these keys, of these types; the text of its first complaint. */
function checkOnly(name: string, data: Record<string, unknown>, keys: Record<string, Check>): string | null {
  for (const [key, check] of Object.entries(keys)) {
    if (!(key in data)) return `${key} key is missing from ${name}`;
    const [ok, complaint] = CHECKS[check];
    if (!ok(data[key])) return `${name}["${key}"] ${complaint}`;
  }
  const extra = Object.keys(data).filter((k) => !(k in keys));
  return extra.length ? `Unexpected arguments: ${extra.join(", ")}` : null;
}

/**
 * What is wrong with a submessage's data for a widget of this kind (Zulip's validate_poll_data
 * and validate_todo_data), or null. Only the poll's author may change its question.
 */
export function submessageDataProblem(widget: WidgetType, data: unknown, isWidgetAuthor: boolean): string | null {
  const name = `${widget} data`;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return `${name} is not a dict`;
  const d = data as Record<string, unknown>;
  if (!("type" in d)) return `type key is missing from ${name}`;
  if (typeof d.type !== "string") return `${name}["type"] is not a string`;
  if (widget === "poll") {
    if (d.type === "vote") return checkOnly(name, d, { type: "string", key: "string", vote: "int" });
    if (d.type === "question") {
      if (!isWidgetAuthor) return "You can't edit a question unless you are the author.";
      return checkOnly(name, d, { type: "string", question: "string" });
    }
    if (d.type === "new_option") return checkOnly(name, d, { type: "string", option: "string", idx: "int" });
    return `Unknown type for poll data: ${d.type}`;
  }
  if (d.type === "new_task") return checkOnly(name, d, { type: "string", key: "int", task: "string", desc: "string", completed: "bool" });
  if (d.type === "strike") return checkOnly(name, d, { type: "string", key: "string" });
  return `Unknown type for todo data: ${d.type}`;
}
