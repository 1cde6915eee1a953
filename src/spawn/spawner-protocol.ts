/** The messages between the engine and its spawner process (spawner.ts ↔ spawner-main.ts), one JSON object per line. */

export type SpawnerRequest =
  | {
      t: 'run';
      id: number;
      argv: readonly string[];
      env?: Readonly<Record<string, string>>;
      cwd?: string;
      /** maxOutputBytes of each stream. */
      max: number;
    }
  | { t: 'kill'; id: number; signal: NodeJS.Signals };

export type SpawnerReply =
  /** Sent once at start-up: from now on the spawner serves requests without delay. */
  | { t: 'ready' }
  | { t: 'started'; id: number; pid: number }
  | { t: 'error'; id: number; message: string; code: string }
  | {
      t: 'exit';
      id: number;
      code: number;
      signal: NodeJS.Signals | null;
      /** Kept stdout, base64. */
      out: string;
      /** Kept stderr, base64. */
      err: string;
    };
