// Texts of the hosted pages, per checkout locale.
export interface Strings {
  title(merchant: string): string;
  payTo(merchant: string): string;
  amountLabel: string;
  testMode: string;
  method: string;
  card: string;
  mobileMoney: string;
  cardDetails: string;
  cardNumber: string;
  expiry: string;
  cvc: string;
  phone: string;
  phoneHint: string;
  pay(amount: string): string;
  cancel: string;
  paid: string;
  paidText(amount: string, merchant: string): string;
  processing: string;
  processingText: string;
  failed: string;
  cancelled: string;
  cancelledText: string;
  backTo(merchant: string): string;
  notFound: string;
  notFoundText: string;
  expired: string;
  expiredText: string;
  reload: string;
  errSession: string;
  errMethod: string;
  errCardMissing: string;
  errCardNumber: string;
  errExpiry: string;
  errExpired: string;
  errCvc: string;
  errPhone: string;
}

const en: Strings = {
  title: (m) => `Pay ${m}`,
  payTo: (m) => `Payment to ${m}`,
  amountLabel: 'Amount to pay',
  testMode: 'Test mode: no real money moves. Card 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined, 4000 0000 0000 9995 has insufficient funds; mobile money numbers ending in 0000 fail.',
  method: 'Payment method',
  card: 'Card',
  mobileMoney: 'Mobile money',
  cardDetails: 'Card details',
  cardNumber: 'Card number',
  expiry: 'Expiry (MM/YY)',
  cvc: 'Security code (CVC)',
  phone: 'Mobile money phone number',
  phoneHint: 'International format, e.g. +256700000001.',
  pay: (a) => `Pay ${a}`,
  cancel: 'Cancel and return to the merchant',
  paid: 'Payment received',
  paidText: (a, m) => `Your payment of ${a} to ${m} was successful.`,
  processing: 'Payment in progress',
  processingText: 'Your payment is being processed. You can close this page.',
  failed: 'Payment failed',
  cancelled: 'Payment cancelled',
  cancelledText: 'You cancelled this payment. Nothing was charged.',
  backTo: (m) => `Return to ${m}`,
  notFound: 'Checkout not found',
  notFoundText: 'This payment link is not valid. Ask the merchant for a new one.',
  expired: 'This checkout has expired',
  expiredText: 'The payment link is no longer valid. Ask the merchant for a new one.',
  reload: 'Reload the payment page',
  errSession: 'Your session expired. Reload the page and try again.',
  errMethod: 'Choose a payment method.',
  errCardMissing: 'Enter your card number.',
  errCardNumber: 'Your card number is incorrect.',
  errExpiry: 'Enter the expiry date as MM/YY.',
  errExpired: 'Your card has expired.',
  errCvc: 'Enter the 3 or 4 digit security code.',
  errPhone: 'Enter the phone number in international format, e.g. +256700000001.',
};

const fr: Strings = {
  title: (m) => `Payer ${m}`,
  payTo: (m) => `Paiement à ${m}`,
  amountLabel: 'Montant à payer',
  testMode: 'Mode test : aucun argent réel. La carte 4242 4242 4242 4242 est acceptée, 4000 0000 0000 0002 est refusée, 4000 0000 0000 9995 a un solde insuffisant ; les numéros mobile money finissant par 0000 échouent.',
  method: 'Moyen de paiement',
  card: 'Carte',
  mobileMoney: 'Mobile money',
  cardDetails: 'Carte bancaire',
  cardNumber: 'Numéro de carte',
  expiry: 'Expiration (MM/AA)',
  cvc: 'Code de sécurité (CVC)',
  phone: 'Numéro mobile money',
  phoneHint: 'Format international, par ex. +221770000001.',
  pay: (a) => `Payer ${a}`,
  cancel: 'Annuler et revenir au marchand',
  paid: 'Paiement reçu',
  paidText: (a, m) => `Votre paiement de ${a} à ${m} a réussi.`,
  processing: 'Paiement en cours',
  processingText: 'Votre paiement est en cours de traitement. Vous pouvez fermer cette page.',
  failed: 'Paiement refusé',
  cancelled: 'Paiement annulé',
  cancelledText: 'Vous avez annulé ce paiement. Rien n’a été débité.',
  backTo: (m) => `Revenir à ${m}`,
  notFound: 'Paiement introuvable',
  notFoundText: 'Ce lien de paiement n’est pas valide. Demandez-en un nouveau au marchand.',
  expired: 'Ce lien de paiement a expiré',
  expiredText: 'Le lien de paiement n’est plus valide. Demandez-en un nouveau au marchand.',
  reload: 'Recharger la page de paiement',
  errSession: 'Votre session a expiré. Rechargez la page et réessayez.',
  errMethod: 'Choisissez un moyen de paiement.',
  errCardMissing: 'Saisissez le numéro de carte.',
  errCardNumber: 'Le numéro de carte est incorrect.',
  errExpiry: 'Saisissez la date d’expiration au format MM/AA.',
  errExpired: 'Votre carte a expiré.',
  errCvc: 'Saisissez le code de sécurité à 3 ou 4 chiffres.',
  errPhone: 'Saisissez le numéro au format international, par ex. +221770000001.',
};

export const strings = { en, fr } as const;
