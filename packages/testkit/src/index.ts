export * from "./env";
export * from "./http";
export * from "./infra";
export * from "./stack";
export * from "./proxy";
export * from "./metrics";
export * from "./plans";
export * from "./mail";
