import { pipeline } from "node:stream/promises";
import { CreateRealmExport, DeleteRealmExport, DownloadRealmExport, GetRealmExports, InternalExportRealm } from "@chat/contracts";
import { ApiError, INTERNAL_HEADERS, registerRoute } from "@chat/platform";
import { writeArchive } from "../actions/realm-export-archive";
import { doCreateRealmExport, doDeleteRealmExport, getRealmExports, openRealmExport } from "../actions/realm-exports";
import type { AppDeps, RoutePlugin } from "../deps";
import type { RealmExportJob } from "../jobs/realm-exports";
import type { FileStorage } from "../storage";

const notFound = () => new ApiError("BAD_REQUEST", "File not found", { status: 404 });

/** Data exports: the list, a new one (the job makes it), deletion, and the archive itself. */
export function realmExportRoutes(storage: FileStorage, job: Pick<RealmExportJob, "kick">): RoutePlugin {
  return (app, deps: AppDeps) => {
    registerRoute(app, GetRealmExports, async ({ identity }) => ({ exports: await getRealmExports(deps, identity) }));

    registerRoute(app, CreateRealmExport, async ({ identity }) => {
      const id = await doCreateRealmExport(deps, identity);
      job.kick();
      return { id };
    });

    registerRoute(app, DeleteRealmExport, async ({ params, identity }) => {
      await doDeleteRealmExport(deps, storage, identity, params.export_id);
      return {};
    });

    registerRoute(app, InternalExportRealm, async ({ params, req, reply }) => {
      // Unknown organizations are refused before the answer starts (accounts says "Invalid realm").
      await deps.accounts.getRealm(params.realm_id);
      reply.hijack();
      reply.raw.writeHead(200, { "content-type": "application/gzip", [INTERNAL_HEADERS.requestId]: req.id });
      await writeArchive(deps, storage, params.realm_id, (body) => pipeline(body, reply.raw)).catch((err) => {
        // Headers are out: cutting the connection is how the operator's download learns of it.
        req.log.warn({ err: (err as Error).message, realmId: params.realm_id }, "operator export failed");
        reply.raw.destroy();
      });
    });

    registerRoute(app, DownloadRealmExport, async ({ params, req, reply }) => {
      const file = await openRealmExport(deps, storage, params.realm_id_str, params.token, params.filename);
      if (!file) throw notFound();
      reply.hijack();
      reply.raw.writeHead(200, {
        "content-type": "application/gzip",
        "content-length": String(file.size),
        "content-disposition": `attachment; filename="${params.filename.replace(/[^A-Za-z0-9._-]/g, "_")}"`,
        "x-content-type-options": "nosniff",
        "cache-control": "private, no-store",
        [INTERNAL_HEADERS.requestId]: req.id,
      });
      await pipeline(file.stream, reply.raw).catch((err) => req.log.warn({ err: (err as Error).message }, "export download interrupted"));
    });
  };
}
