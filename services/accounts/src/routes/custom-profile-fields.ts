import {
  CreateCustomProfileField,
  DeleteCustomProfileField,
  GetCustomProfileFields,
  RemoveOwnProfileData,
  ReorderCustomProfileFields,
  UpdateCustomProfileField,
  UpdateOwnProfileData,
} from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import {
  doCreateCustomProfileField,
  doDeleteCustomProfileField,
  doRemoveOwnProfileData,
  doReorderCustomProfileFields,
  doUpdateCustomProfileField,
  doUpdateOwnProfileData,
} from "../actions/custom-profile-fields";
import type { AccountsDeps } from "../deps";
import { getCustomProfileFields } from "../queries/custom-profile-fields";

export function customProfileFieldRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, GetCustomProfileFields, async ({ identity }) => ({ custom_fields: await getCustomProfileFields(deps, identity) }));

  registerRoute(app, CreateCustomProfileField, async ({ identity, params }) => ({
    id: await doCreateCustomProfileField(deps, identity, {
      name: params.name,
      hint: params.hint,
      fieldType: params.field_type,
      fieldData: params.field_data,
      displayInProfileSummary: params.display_in_profile_summary,
      required: params.required,
    }),
  }));

  registerRoute(app, ReorderCustomProfileFields, async ({ identity, params }) => {
    await doReorderCustomProfileFields(deps, identity, params.order);
    return {};
  });

  registerRoute(app, UpdateCustomProfileField, async ({ identity, params }) => {
    await doUpdateCustomProfileField(deps, identity, params.field_id, {
      name: params.name,
      hint: params.hint,
      fieldData: params.field_data,
      displayInProfileSummary: params.display_in_profile_summary,
      required: params.required,
    });
    return {};
  });

  registerRoute(app, DeleteCustomProfileField, async ({ identity, params }) => {
    await doDeleteCustomProfileField(deps, identity, params.field_id);
    return {};
  });

  registerRoute(app, UpdateOwnProfileData, async ({ identity, params }) => {
    await doUpdateOwnProfileData(deps, identity, params.data);
    return {};
  });

  registerRoute(app, RemoveOwnProfileData, async ({ identity, params }) => {
    await doRemoveOwnProfileData(deps, identity, params.data);
    return {};
  });
}
