/** Entry point of the `probelet` command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  process.stderr.write(`probelet: not implemented yet (${argv.join(' ')})\n`);
  return 2;
}
