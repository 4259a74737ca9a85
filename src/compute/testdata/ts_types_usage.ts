// Type-checked by ctest compute_policies_ts_compiles (tsc --strict): the
// golden output of GenerateTypeScript compiles, a client returning
// @tessera/client's own InvokeResult (clients/ts/src/compute.ts) fits the
// wrappers, and the generated types refuse wrong params (every
// expect-error directive below must see an error).
import type { InvokeResult } from "../../../clients/ts/src/compute.js";
import {
  invokeShopBuy,
  invokeWorldSimGetForecast,
  type ShopBuyResult,
} from "./ts_types_golden";

class FakeClient {
  async invoke(
    module: string,
    exportName: string,
    params: Record<string, unknown>,
  ): Promise<InvokeResult> {
    return {
      result: { module, exportName, params },
      fuelUsed: 1,
      durationUs: 1,
      flowId: "f",
    };
  }
}

export async function usage(): Promise<boolean | undefined> {
  const client = new FakeClient();
  const bought: ShopBuyResult = await invokeShopBuy(client, {
    amount: 3,
    targetId: "b1",
    "dry-run": true,
  });
  await invokeShopBuy(client, { amount: 1 });
  const forecast = await invokeWorldSimGetForecast(client, { day: 2 });
  const rain: number = forecast.rain;
  void rain;

  // @ts-expect-error amount is required
  await invokeShopBuy(client, { targetId: "b1" });
  // @ts-expect-error amount is a number
  await invokeShopBuy(client, { amount: "3" });
  // @ts-expect-error placed is a boolean
  const placed: string | undefined = bought.placed;
  void placed;
  // @ts-expect-error a client without invoke does not fit
  await invokeShopBuy({}, { amount: 1 });
  return bought.placed;
}
