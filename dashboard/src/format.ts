// Formatting without React: money in minor units (shared by the components and the invoice rules).

/** How many minor-unit digits a currency has (2 for USD, 0 for JPY). */
export const minorDigits = (currency: string) => {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
};

export function formatMoney(amount: number, currency: string): string {
  const digits = minorDigits(currency);
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency, minimumFractionDigits: digits }).format(amount / 10 ** digits);
  } catch {
    return `${amount} ${currency}`;
  }
}
