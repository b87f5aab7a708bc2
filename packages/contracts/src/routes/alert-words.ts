import { z } from "zod";
import { maxChars, p } from "../params";
import { route, success } from "../route";

/** Zulip caps one alert word (or phrase) at 100 characters. */
export const MAX_ALERT_WORD_LENGTH = 100;

const AlertWordsResponse = success({ alert_words: z.array(z.string()) });

export const GetAlertWords = route({
  method: "GET",
  path: "/users/me/alert_words",
  service: "accounts",
  auth: "user",
  params: {},
  response: AlertWordsResponse,
});

/** Adds words (case-insensitively new ones only); answers the whole list. */
export const AddAlertWords = route({
  method: "POST",
  path: "/users/me/alert_words",
  service: "accounts",
  auth: "user",
  params: { alert_words: p.json(z.array(maxChars(MAX_ALERT_WORD_LENGTH))).required() },
  response: AlertWordsResponse,
});

/** Removes words (case-insensitively); answers the remaining list. */
export const RemoveAlertWords = route({
  method: "DELETE",
  path: "/users/me/alert_words",
  service: "accounts",
  auth: "user",
  params: { alert_words: p.json(z.array(z.string())).required() },
  response: AlertWordsResponse,
});
