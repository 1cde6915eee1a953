/**
 * The kubelet's two image pull settings as flags of `probelet run` and `probelet node`:
 * `--serialize-image-pulls` (KubeletConfiguration `serializeImagePulls`, the kubelet's flag of
 * that name; default true) and `--max-parallel-image-pulls` (`maxParallelImagePulls`). Bad
 * values, and the combinations the kubelet's validation refuses, are usage errors (exit 2).
 */
import { Option, type Command } from 'commander';
import { validateImagePullOptions, type ImagePullerOptions } from '../kubelet/image-puller.js';
import { CliUsageError } from './io.js';

export interface ImagePullFlags {
  serializeImagePulls?: string;
  maxParallelImagePulls?: string;
}

/** Adds the two flags to `command`. */
export function addImagePullOptions(command: Command): Command {
  return command
    .addOption(new Option('--serialize-image-pulls <bool>', 'pull one image at a time, as the kubelet does by default (false: pulls run at once)').choices(['true', 'false']))
    .option('--max-parallel-image-pulls <n>', 'with --serialize-image-pulls=false: at most this many pulls at once (default: no limit)');
}

/** The flags' settings for the Kubelet; the kubelet's own validation messages on conflicts. */
export function imagePullOptions(flags: ImagePullFlags): ImagePullerOptions {
  const options: ImagePullerOptions = {};
  if (flags.serializeImagePulls !== undefined) options.serializeImagePulls = flags.serializeImagePulls === 'true';
  if (flags.maxParallelImagePulls !== undefined) {
    const n = Number(flags.maxParallelImagePulls);
    if (!/^\d+$/.test(flags.maxParallelImagePulls.trim())) throw new CliUsageError(`--max-parallel-image-pulls: expected a whole number, got ${JSON.stringify(flags.maxParallelImagePulls)}`);
    options.maxParallelImagePulls = n;
  }
  const invalid = validateImagePullOptions(options);
  if (invalid !== undefined) throw new CliUsageError(invalid);
  return options;
}
