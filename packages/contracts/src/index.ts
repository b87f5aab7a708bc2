export * from "./envelope";
export * from "./errors";
export * from "./events/index";
export * from "./params";
export * from "./route";
export * from "./routes/index";
export * from "./version";
