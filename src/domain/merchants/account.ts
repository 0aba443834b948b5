// The merchant's own settings, as the API shows and changes them (GET/PATCH /v1/account, GraphQL
// merchant / updateMerchantSettings, the CLI's `merchant update`): name and branding (accent colour,
// logo). The change and its account.updated event are made in src/services/account.ts.
import type { Merchant } from '../../generated/prisma/client.ts';
import { ValidationError } from '../../platform/errors.ts';
import { freeText, z } from '../../platform/validation.ts';

/** The largest logo accepted, decoded. */
export const MAX_LOGO_BYTES = 128 * 1024;
export const LOGO_TYPES = ['image/png', 'image/jpeg'] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

const LOGO_DESCRIPTION = `A data: URL of a PNG or JPEG image (data:image/png;base64,…), at most ${MAX_LOGO_BYTES / 1024} KiB decoded; null removes it. SVG is refused (it can carry script). Shown on the hosted pages and invoice PDFs.`;

export const merchantName = freeText(200).meta({ example: 'Acme Coffee' });
export const accentColor = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, { error: 'must be a colour such as #1A2B3C' })
  .meta({ description: 'The accent colour of the hosted pages and invoice PDFs (#RRGGBB); null: the default.', example: '#0A7C66' });
// Base64 of 128 KiB is 174,763 characters; the prefix adds < 40.
const logoDataUrl = z
  .string()
  .max(175_000, { error: `must be at most ${MAX_LOGO_BYTES / 1024} KiB` })
  .meta({ description: LOGO_DESCRIPTION, example: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==' });

export const accountUpdate = z.strictObject({
  name: merchantName.optional().meta({ description: 'Shown to customers on the hosted pages, e-mails and invoice PDFs.' }),
  branding: z
    .strictObject({
      accent_color: accentColor.nullable().optional(),
      logo: logoDataUrl.nullable().optional(),
    })
    .optional(),
});
export type AccountUpdateInput = z.input<typeof accountUpdate>;

const MAGIC: Record<LogoType, number[]> = { 'image/png': [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/jpeg': [0xff, 0xd8, 0xff] };

/** A logo's data: URL as its type and bytes; refuses anything but a base64 PNG or JPEG whose bytes are one. */
export function parseLogo(url: string): { type: LogoType; bytes: Buffer } {
  const param = 'branding[logo]';
  const m = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/i.exec(url);
  if (!m) throw new ValidationError('parameter_invalid', `Invalid ${param}: must be a base64 data: URL (data:image/png;base64,…).`, param);
  const type = m[1]!.toLowerCase();
  if (type === 'image/svg+xml') throw new ValidationError('parameter_invalid', `Invalid ${param}: SVG is not accepted (it can carry script); use PNG or JPEG.`, param);
  if (!(LOGO_TYPES as readonly string[]).includes(type)) throw new ValidationError('parameter_invalid', `Invalid ${param}: ${type} is not accepted; use PNG or JPEG.`, param);
  const bytes = Buffer.from(m[2]!, 'base64');
  if (bytes.length === 0) throw new ValidationError('parameter_invalid', `Invalid ${param}: the image is empty.`, param);
  if (bytes.length > MAX_LOGO_BYTES) throw new ValidationError('parameter_invalid', `Invalid ${param}: must be at most ${MAX_LOGO_BYTES / 1024} KiB.`, param);
  if (!MAGIC[type as LogoType].every((b, i) => bytes[i] === b)) throw new ValidationError('parameter_invalid', `Invalid ${param}: the data is not a ${type === 'image/png' ? 'PNG' : 'JPEG'} image.`, param);
  return { type: type as LogoType, bytes };
}

export type Branding = Pick<Merchant, 'accentColor' | 'logoType' | 'logo'>;

/** The logo as a data: URL (hosted pages inline it; the API returns it), or null. */
export function logoDataUrlOf(m: { logoType?: string | null; logo?: Uint8Array | null }): string | null {
  return m.logo && m.logoType ? `data:${m.logoType};base64,${Buffer.from(m.logo).toString('base64')}` : null;
}

export interface AccountJSON {
  id: string;
  object: 'account';
  name: string;
  mode: 'test' | 'live';
  branding: { accent_color: string | null; logo: string | null };
  created_at: string;
}

export function accountToJSON(m: Merchant): AccountJSON {
  return {
    id: m.id,
    object: 'account',
    name: m.name,
    mode: m.mode === 'live' ? 'live' : 'test',
    branding: { accent_color: m.accentColor, logo: logoDataUrlOf(m) },
    created_at: m.createdAt.toISOString(),
  };
}
