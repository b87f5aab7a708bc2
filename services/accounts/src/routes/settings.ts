import { UpdateRealm, UpdateRealmUserSettingsDefaults, UpdateSettings, ownOnlySettingParams, personalSettingParams } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doUpdateRealm } from "../actions/realm-settings";
import { doUpdateRealmUserSettingsDefaults, doUpdateSettings } from "../actions/settings";
import type { AccountsDeps } from "../deps";
import type { SettingValue } from "../lib/user-settings";

const SETTING_PARAM_NAMES = [...Object.keys(personalSettingParams), ...Object.keys(ownOnlySettingParams)];

/** The settings a request carried, by name (absent ones are undefined in the parsed params). */
function givenSettings(params: Record<string, unknown>, names: string[]): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = {};
  for (const name of names) if (params[name] !== undefined) out[name] = params[name] as SettingValue;
  return out;
}

export function settingsRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, UpdateSettings, async ({ identity, params }) => {
    const { emailChangeStarted } = await doUpdateSettings(deps, identity, {
      fullName: params.full_name,
      email: params.email,
      oldPassword: params.old_password,
      newPassword: params.new_password,
      settings: givenSettings(params, SETTING_PARAM_NAMES),
    });
    // Zulip's server answers this text (undocumented in its API description) when a link went out.
    return emailChangeStarted ? { account_email: "Check your email for a confirmation link." } : {};
  });

  registerRoute(app, UpdateRealmUserSettingsDefaults, async ({ identity, params }) => {
    await doUpdateRealmUserSettingsDefaults(deps, identity, givenSettings(params, Object.keys(personalSettingParams)));
    return {};
  });

  // Administrators only, whatever was sent (Zulip's update_realm), even nothing it supports.
  registerRoute(app, UpdateRealm, async ({ identity, params }) => doUpdateRealm(deps, identity, params));
}
