import type { RouteDef } from "../route";
import * as server from "./server";

export * from "./server";

/** Every route of every service. The gateway routes from this table; tests validate against it. */
export const allRoutes: RouteDef[] = [...Object.values(server)] as RouteDef[];
