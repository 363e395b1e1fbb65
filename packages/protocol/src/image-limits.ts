/**
 * The Messages API's limits on images (docs: "Images and vision"), checked by Tether before a
 * turn is recorded so a host learns at submit, not from a failed run.
 */
export const imageLimits = {
  /** Bytes of one image, decoded (the API refuses larger ones). */
  maxBytes: 5 * 1024 * 1024,
  /** Pixels on either side of one image. */
  maxDimension: 8000,
  /** Pixels on either side when a turn carries more than `manyImages` images. */
  maxDimensionWhenMany: 2000,
  manyImages: 20,
  /** Images in one turn. */
  maxImages: 100,
  /** Bytes of every image of one turn together, decoded: what fits the API's 32 MB request once base64-encoded. */
  maxTotalBytes: 24 * 1024 * 1024,
} as const;
