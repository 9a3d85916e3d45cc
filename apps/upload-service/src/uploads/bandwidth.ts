import { MAX_IMPORT_FILE_BYTES } from '@recordbase/contracts/uploads';
import type { Logger } from '@recordbase/server-kit/logger';
import { createRateLimiter, rateLimited } from '@recordbase/server-kit/rate-limit';
import type { Redis } from 'ioredis';

/** Room for the multipart framing and FilePond's metadata part beside the file. */
export const FRAMING_BYTES = 64 * 1024;
/** The largest body an upload route takes: an import file and its framing. */
export const LARGEST_UPLOAD_BYTES = MAX_IMPORT_FILE_BYTES + FRAMING_BYTES;

export interface UploadBandwidth {
  /** UPLOAD_BYTES_PER_SECOND_PER_KEY */
  bytesPerSecond: number;
  /** UPLOAD_BYTES_BURST_PER_KEY, at least LARGEST_UPLOAD_BYTES */
  burstBytes: number;
}

const MIB = 1024 * 1024;

/**
 * 8 MiB a second, 64 MiB at once: a key may send the largest import file at once, and uploads
 * around the clock at a rate no legitimate client of one key needs more of.
 */
export const DEFAULT_UPLOAD_BANDWIDTH: UploadBandwidth = { bytesPerSecond: 8 * MIB, burstBytes: 64 * MIB };

const inMib = (bytes: number) => `${Number((bytes / MIB).toFixed(2))} MiB`;

/** Settles a chunked upload's charge to what its stored file took, once it is stored. */
export type SettleUploadCharge = (storedBytes: number) => void;

/**
 * The bytes one API key may upload, over every replica and all upload routes: without it a key
 * within its request rate could still push 50 MB a second at the service, refused or not, since a
 * refused upload's body crosses the network and is read all the same. A declared upload is charged
 * its Content-Length before its body is read. One sent chunked, its length unknown until it ends,
 * is charged the route's largest body, then, once its file is stored, what the file took: one
 * refused or cut short keeps the whole charge, so sending chunked never costs a key less.
 */
export function createUploadBudget(redis: Redis, bandwidth: UploadBandwidth, logger: Logger) {
  const check = createRateLimiter(redis, {
    perSecond: bandwidth.bytesPerSecond,
    burst: bandwidth.burstBytes,
  });
  /**
   * Charges an upload of the key (its Content-Length, undefined when sent chunked), or throws 429
   * RATE_LIMITED with Retry-After; for an upload sent chunked, gives what settles its charge.
   */
  return async function chargeUpload(
    keyId: string | null,
    declaredBytes: number | undefined,
    largestBody: number,
  ): Promise<SettleUploadCharge | undefined> {
    const subject = `upload-bytes:${keyId ?? 'root'}`;
    const cost = declaredBytes ?? largestBody;
    let decision: Awaited<ReturnType<typeof check>>;
    try {
      decision = await check(subject, { cost });
    } catch (error) {
      // As the request rate limit: the budget protects the service, it must not take it down.
      logger.warn({ err: error }, 'upload budget unavailable; letting the upload through');
      return undefined;
    }
    if (!decision.allowed) {
      throw rateLimited(
        decision.retryAfterMs,
        (retryAfter) =>
          `This API key has uploaded its share of bytes (${inMib(bandwidth.bytesPerSecond)} a second, ${inMib(bandwidth.burstBytes)} at once); retry after ${retryAfter} s`,
      );
    }
    if (declaredBytes !== undefined) return undefined;
    return (storedBytes) => {
      check(subject, { cost: Math.min(0, storedBytes - cost), force: true }).catch(() => {});
    };
  };
}
