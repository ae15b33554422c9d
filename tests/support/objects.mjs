// A fleet's Durable Objects in this process, for tests on virtual time:
// the code a GateObject runs (GateHub, js/fleet/hub.js; BudgetHub,
// js/fleet/shared-budget.js), one of each per object name, behind a
// namespace (idFromName, get) whose RPCs structured-clone their arguments
// and answers and take `rpcMs` each way on the global timers (virtual under
// the clock). Each isolate gets a view of the namespace (`view()`), whose
// `fault(method, args)` a test sets to make that isolate's RPCs fail as a
// real one's can: 'reject' (the RPC rejects: the object unreachable),
// 'throw' (a stub cannot be had), 'never' (no answer ever: in workerd, a
// round trip whose Worker request ended first is never settled), a number
// (answered that many ms late), or undefined (answered).
import { GateHub } from '../../js/fleet/hub.js';
import { BudgetHub } from '../../js/fleet/shared-budget.js';

const GATE = ['report', 'admit', 'probed', 'lease'];

/**
 * The objects of a fleet.
 * @param {{ rpcMs?: number }} [options]
 */
export function objects({ rpcMs = 0 } = {}) {
  /** name -> { gate: GateHub, budget: BudgetHub } */
  const all = new Map();
  const later = (ms) => new Promise((r) => setTimeout(r, ms));
  const of = (name) => {
    if (!all.has(name)) all.set(name, { gate: new GateHub(), budget: new BudgetHub() });
    return all.get(name);
  };
  return {
    all,
    /** The GateHub of object `name` (made if new). */
    hub: (name) => of(name).gate,
    /** The BudgetHub of object `name` (made if new). */
    budgets: (name) => of(name).budget,
    /** What GateObject's stats() answers for object `name`. */
    stats(name) {
      const { gate: hub, budget } = of(name);
      return {
        rpcs: { ...hub.rpcs },
        gate: hub.gate?.stats() ?? null,
        limiters: Object.fromEntries([...hub.limiters].map(([k, l]) => [k, l.toJSON()])),
        budget: { ...budget.counts },
      };
    },
    /** A namespace binding as one isolate sees it; set its `fault` to make its RPCs fail. */
    view() {
      const ns = {
        /** @type {(method: string, args: unknown[]) => 'reject' | 'throw' | 'never' | number | undefined} */
        fault: () => undefined,
        idFromName: (name) => name,
        get(name) {
          const rpc = (m, run) => ({
            [m]: async (...args) => {
              const f = ns.fault(m, args);
              if (f === 'throw') throw new Error('no stub');
              if (f === 'reject') {
                await null;
                throw new Error('unreachable object');
              }
              if (f === 'never') return new Promise(() => {});
              if (rpcMs > 0) await later(rpcMs);
              if (typeof f === 'number') await later(f);
              const answer = structuredClone(await run(...structuredClone(args)));
              if (rpcMs > 0) await later(rpcMs);
              return answer;
            },
          });
          const o = of(name);
          // (a stub that cannot be had throws at get(), as a namespace's does)
          if (ns.fault('get', []) === 'throw') throw new Error('no stub');
          return Object.assign(
            {},
            ...GATE.map((m) => rpc(m, (...a) => o.gate[m](...a))),
            rpc('budget', (...a) => o.budget.budget(...a)),
          );
        },
      };
      return ns;
    },
    /** Frees the objects' gates. */
    free() {
      for (const { gate } of all.values()) gate.gate?.free();
    },
  };
}
