// Texts of the hosted pages (checkout, top-up, setup, portal), per locale.
import { DECLINE_OTHER, DECLINE_REASONS } from '../domain/payments/decline-reasons.ts';
export type Locale = 'en' | 'fr';
type What = { checkout: string; setup: string; portal: string };

export interface Strings {
  lang: Locale;
  declinedRetry: string;
  submitting: string;
  // setup
  setupTitle(merchant: string): string;
  setupIntro(merchant: string): string;
  setupTestMode: string;
  saveMethod: string;
  saved: string;
  savedText(what: string): string;
  continue: string;
  // portal
  portalTitle(merchant: string): string;
  portalIntro(merchant: string): string;
  profile: string;
  name: string;
  email: string;
  profilePhone: string;
  saveProfile: string;
  profileSaved: string;
  methods: string;
  noMethods: string;
  defaultBadge: string;
  makeDefault: string;
  remove: string;
  removed: string;
  defaultSet: string;
  methodAdded: string;
  /** a method added in the portal became the default (and retried what was owed) */
  methodAddedDefault: string;
  /** …and an invoice was paid with it since */
  addedPaidOwed: string;
  /** …and an invoice is still unpaid after its last attempt failed */
  addedStillOwed: string;
  addMethod: string;
  cardEnding(brand: string, last4: string, exp: string): string;
  mobileEnding(last4: string): string;
  wallets: string;
  noWallets: string;
  balance: string;
  recentActivity: string;
  noActivity: string;
  subscriptions: string;
  noSubscriptions: string;
  subStatus: Record<string, string>;
  planPrice(amount: string, interval: string, count: number): string;
  nextBilling(date: string): string;
  trialEnds(date: string): string;
  cancelsOn(date: string): string;
  endedOn(date: string): string;
  resumesOn(date: string): string;
  cancelAtPeriodEnd: string;
  keepSubscription: string;
  subscriptionCancelling: string;
  subscriptionKept: string;
  // paying an invoice from the portal
  payNow: string;
  invoicePaid: string;
  /** The decline reason of a "Pay now" that failed, from the failure's code. */
  payFailed(reason: string): string;
  declineReason: Record<string, string>;
  declineOther: string;
  invoices: string;
  noInvoices: string;
  invoiceNumber: string;
  invoiceDate: string;
  invoiceTotal: string;
  invoiceStatusLabel: string;
  invoiceStatus: Record<string, string>;
  pdf: string;
  pdfOf(number: string): string;
  pdfHint: string;
  /** the customer's credit balance (amounts already formatted), drawn by their next invoices */
  creditBalance: (amounts: string) => string;
  sessionEnds(time: string): string;
  txType: Record<string, string>;
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
  notFound: What;
  notFoundText: string;
  expired: What;
  expiredText: string;
  reload: string;
  errSession: string;
  errMethod: string;
  errCardMissing: string;
  errCardNumber: string;
  errExpiry: string;
  errExpired: string;
  /** the expiry's month is not 01–12 */
  errExpiryMonth: string;
  errCvc: string;
  /** above a form whose fields were refused: the list of messages follows */
  errSummary: string;
  expiryPlaceholder: string;
  /** after a decline because the payment service is unavailable (never says why: that is the merchant's business) */
  tryLater: string;
  /** a checkout opened after an earlier attempt failed (an invoice's automatic charge, say): a notice, not an error */
  lastAttemptFailed(reason: string): string;
  // portal confirmations
  removeConfirmTitle: string;
  /** removing the only method while subscriptions still need one */
  removeConfirmText(method: string, plans: string): string;
  removeAnyway: string;
  keepMethod: string;
  cancelConfirmTitle: string;
  cancelConfirmText(plan: string, date: string): string;
  cancelTrialConfirmText(plan: string, date: string): string;
  confirmCancel: string;
  goBack: string;
  errPhone: string;
  errName: string;
  errEmail: string;
  errText: string;
  errConflict: string;
  badForm: string;
  badFormText: string;
  // limits on payment attempts (card testing) and on portal links
  tooManyAttempts: string;
  setupAttemptsSpent(merchant: string): string;
  checkoutAttemptsSpent(merchant: string): string;
  errTooManyFromAddress(minutes: number): string;
  errSetupLinksSpent(merchant: string): string;
  portalLinkUsed: string;
  portalLinkUsedText(merchant: string): string;
}

const en: Strings = {
  lang: 'en',
  declinedRetry: 'Try another card or method below.',
  submitting: 'Processing…',
  setupTitle: (m) => `Save a payment method for ${m}`,
  setupIntro: (m) => `${m} will charge this method for your future payments. Nothing is charged now.`,
  setupTestMode: 'Test mode: card 4242 4242 4242 4242 is saved, 4000 0000 0000 0002 is refused, 4000 0000 0000 9995 is saved but later charges fail; mobile money numbers ending in 0000 fail when charged.',
  saveMethod: 'Save payment method',
  saved: 'Payment method saved',
  savedText: (w) => `${w} is saved.`,
  continue: 'Continue',
  portalTitle: (m) => `Your account with ${m}`,
  portalIntro: (m) => `Manage your details and payment methods with ${m}.`,
  profile: 'Your details',
  name: 'Name',
  email: 'Email',
  profilePhone: 'Phone',
  saveProfile: 'Save details',
  profileSaved: 'Your details were saved.',
  methods: 'Payment methods',
  noMethods: 'No saved payment method yet.',
  defaultBadge: 'Default',
  makeDefault: 'Make default',
  remove: 'Remove',
  removed: 'The payment method was removed.',
  defaultSet: 'Your default payment method was changed.',
  methodAdded: 'Your new payment method was saved.',
  methodAddedDefault: 'Your new payment method was saved and is now your default: it is the one charged from now on.',
  addedPaidOwed: 'The payment that was due was charged to it: your invoice is paid.',
  addedStillOwed: 'An invoice is still unpaid: its last payment did not go through (see Invoices below).',
  addMethod: 'Add a payment method',
  cardEnding: (b, l, e) => `${b} ending in ${l}, expires ${e}`,
  mobileEnding: (l) => `Mobile money ending in ${l}`,
  wallets: 'Wallets',
  noWallets: 'No wallet.',
  balance: 'Balance',
  recentActivity: 'Recent activity',
  noActivity: 'No activity yet.',
  subscriptions: 'Subscriptions',
  noSubscriptions: 'No subscription.',
  subStatus: { trialing: 'Trial', active: 'Active', past_due: 'Payment overdue', paused: 'Paused', cancelled: 'Cancelled', incomplete: 'Awaiting first payment', unpaid: 'Unpaid' },
  planPrice: (a, i, n) => {
    const unit = ({ day: 'day', week: 'week', month: 'month', year: 'year' } as Record<string, string>)[i] ?? i;
    return n === 1 ? `${a} per ${unit}` : `${a} every ${n} ${unit}s`;
  },
  nextBilling: (d) => `Next payment on ${d}`,
  trialEnds: (d) => `Trial ends on ${d}`,
  cancelsOn: (d) => `Cancels on ${d}`,
  endedOn: (d) => `Ended on ${d}`,
  resumesOn: (d) => `Resumes on ${d}`,
  cancelAtPeriodEnd: 'Cancel at period end',
  keepSubscription: 'Keep my subscription',
  subscriptionCancelling: 'Your subscription will end at the end of the current period.',
  subscriptionKept: 'Your subscription will continue.',
  payNow: 'Pay now',
  invoicePaid: 'Thank you: the invoice is paid.',
  payFailed: (reason) => `The payment did not go through: ${reason} Choose or add another payment method, then try again.`,
  declineReason: DECLINE_REASONS.en,
  declineOther: DECLINE_OTHER.en,
  invoices: 'Invoices',
  noInvoices: 'No invoice.',
  invoiceNumber: 'Number',
  invoiceDate: 'Date',
  invoiceTotal: 'Total',
  invoiceStatusLabel: 'Status',
  invoiceStatus: { draft: 'Draft', open: 'Due', paid: 'Paid', void: 'Void', uncollectible: 'Unpaid' },
  pdf: 'PDF',
  pdfOf: (n) => `PDF of invoice ${n}`,
  pdfHint: 'PDF links are valid for 5 minutes; reload the page to refresh them.',
  creditBalance: (amounts) => `Credit balance: ${amounts}. It is applied to your next invoices before your payment method is charged.`,
  sessionEnds: (t) => `This page stays open until ${t} UTC.`,
  txType: { credit: 'Credit', debit: 'Debit', topup: 'Top-up', expiry: 'Expired credit', refund: 'Refund', refund_reversal: 'Refund reversed' },
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
  notFound: { checkout: 'Checkout not found', setup: 'Page not found', portal: 'Page not found' },
  notFoundText: 'This link is not valid. Ask the merchant for a new one.',
  expired: { checkout: 'This checkout has expired', setup: 'This link has expired', portal: 'This session has expired' },
  expiredText: 'The link is no longer valid. Ask the merchant for a new one.',
  reload: 'Reload the payment page',
  errSession: 'Your session expired. Reload the page and try again.',
  errMethod: 'Choose a payment method.',
  errCardMissing: 'Enter your card number.',
  errCardNumber: 'Your card number is incorrect.',
  errExpiry: 'Enter the expiry date as MM/YY.',
  errExpired: 'Your card has expired.',
  errExpiryMonth: 'The expiry month must be between 01 and 12.',
  errCvc: 'Enter the 3 or 4 digit security code.',
  errSummary: 'Check the following:',
  expiryPlaceholder: 'MM/YY',
  tryLater: 'Nothing was charged. Try again in a few minutes.',
  lastAttemptFailed: (r) => `Your last payment attempt failed: ${r} Enter a card or another method below to pay.`,
  removeConfirmTitle: 'Remove your only payment method?',
  removeConfirmText: (m, p) => `${m} is the only payment method on your account, and ${p} still needs one. Without it, the next payment cannot be taken: it will fail and the subscription may end. Add another method first to avoid this.`,
  removeAnyway: 'Remove it anyway',
  keepMethod: 'Keep this payment method',
  cancelConfirmTitle: 'Cancel your subscription?',
  cancelConfirmText: (p, d) => `Your subscription to ${p} will end on ${d}, at the end of the current period. You keep it until then, and no further period will be billed.`,
  cancelTrialConfirmText: (p, d) => `Your trial of ${p} will end on ${d} and the subscription will not start: you will not be charged.`,
  confirmCancel: 'Cancel my subscription',
  goBack: 'Go back without changing anything',
  errPhone: 'Enter the phone number in international format, e.g. +256700000001.',
  errName: 'Enter your name again: it is too long or contains characters that cannot be saved.',
  errEmail: 'Enter a valid email address, e.g. name@example.com.',
  errText: 'A field contains characters that cannot be saved. Check what you typed and try again.',
  errConflict: 'This could not be done: it changed in the meantime. The current state is shown below.',
  badForm: 'The form could not be read',
  badFormText: 'Go back, reload the page and try again.',
  tooManyAttempts: 'Too many attempts',
  setupAttemptsSpent: (m) => `Too many payment methods were refused on this link, so it no longer accepts any. Ask ${m} for a new link.`,
  checkoutAttemptsSpent: (m) => `This payment was declined too many times, so it no longer accepts any attempt. Return to ${m} to start again.`,
  errTooManyFromAddress: (n) => `Too many payment attempts from your network were refused. Try again in ${n} minute${n === 1 ? '' : 's'}.`,
  errSetupLinksSpent: (m) => `You started adding a payment method too many times in this session. Open your account again from ${m} to add another.`,
  portalLinkUsed: 'This link was already used',
  portalLinkUsedText: (m) => `For your security, a link to your account opens only once. Ask ${m} for a new one.`,
};

const fr: Strings = {
  lang: 'fr',
  declinedRetry: 'Essayez une autre carte ou un autre moyen ci-dessous.',
  submitting: 'Traitement…',
  setupTitle: (m) => `Enregistrer un moyen de paiement pour ${m}`,
  setupIntro: (m) => `${m} débitera ce moyen pour vos prochains paiements. Rien n’est débité maintenant.`,
  setupTestMode: 'Mode test : la carte 4242 4242 4242 4242 est enregistrée, 4000 0000 0000 0002 est refusée, 4000 0000 0000 9995 est enregistrée mais les débits échouent ; les numéros mobile money finissant par 0000 échouent au débit.',
  saveMethod: 'Enregistrer le moyen de paiement',
  saved: 'Moyen de paiement enregistré',
  savedText: (w) => `${w} est enregistré.`,
  continue: 'Continuer',
  portalTitle: (m) => `Votre compte chez ${m}`,
  portalIntro: (m) => `Gérez vos informations et vos moyens de paiement chez ${m}.`,
  profile: 'Vos informations',
  name: 'Nom',
  email: 'E-mail',
  profilePhone: 'Téléphone',
  saveProfile: 'Enregistrer',
  profileSaved: 'Vos informations ont été enregistrées.',
  methods: 'Moyens de paiement',
  noMethods: 'Aucun moyen de paiement enregistré.',
  defaultBadge: 'Par défaut',
  makeDefault: 'Choisir par défaut',
  remove: 'Supprimer',
  removed: 'Le moyen de paiement a été supprimé.',
  defaultSet: 'Votre moyen de paiement par défaut a été changé.',
  methodAdded: 'Votre nouveau moyen de paiement a été enregistré.',
  methodAddedDefault: 'Votre nouveau moyen de paiement a été enregistré et devient votre moyen par défaut : c’est lui qui sera débité désormais.',
  addedPaidOwed: 'Le paiement en attente y a été débité : votre facture est payée.',
  addedStillOwed: 'Une facture reste impayée : son dernier paiement n’a pas abouti (voir Factures ci-dessous).',
  addMethod: 'Ajouter un moyen de paiement',
  cardEnding: (b, l, e) => `${b} se terminant par ${l}, expire ${e}`,
  mobileEnding: (l) => `Mobile money se terminant par ${l}`,
  wallets: 'Portefeuilles',
  noWallets: 'Aucun portefeuille.',
  balance: 'Solde',
  recentActivity: 'Activité récente',
  noActivity: 'Aucune activité.',
  subscriptions: 'Abonnements',
  noSubscriptions: 'Aucun abonnement.',
  subStatus: { trialing: 'Essai', active: 'Actif', past_due: 'Paiement en retard', paused: 'En pause', cancelled: 'Résilié', incomplete: 'En attente du premier paiement', unpaid: 'Impayé' },
  planPrice: (a, i, n) => {
    const unit = ({ day: 'jour', week: 'semaine', month: 'mois', year: 'an' } as Record<string, string>)[i] ?? i;
    const units = ({ day: 'jours', week: 'semaines', month: 'mois', year: 'ans' } as Record<string, string>)[i] ?? i;
    return n === 1 ? `${a} par ${unit}` : `${a} tous les ${n} ${units}`;
  },
  nextBilling: (d) => `Prochain paiement le ${d}`,
  trialEnds: (d) => `Fin de l’essai le ${d}`,
  cancelsOn: (d) => `Résiliation le ${d}`,
  endedOn: (d) => `Terminé le ${d}`,
  resumesOn: (d) => `Reprise le ${d}`,
  cancelAtPeriodEnd: 'Résilier en fin de période',
  keepSubscription: 'Conserver mon abonnement',
  subscriptionCancelling: 'Votre abonnement prendra fin à la fin de la période en cours.',
  subscriptionKept: 'Votre abonnement continue.',
  payNow: 'Payer maintenant',
  invoicePaid: 'Merci : la facture est payée.',
  payFailed: (reason) => `Le paiement n’a pas abouti : ${reason} Choisissez ou ajoutez un autre moyen de paiement, puis réessayez.`,
  declineReason: DECLINE_REASONS.fr,
  declineOther: DECLINE_OTHER.fr,
  invoices: 'Factures',
  noInvoices: 'Aucune facture.',
  invoiceNumber: 'Numéro',
  invoiceDate: 'Date',
  invoiceTotal: 'Total',
  invoiceStatusLabel: 'Statut',
  invoiceStatus: { draft: 'Brouillon', open: 'À payer', paid: 'Payée', void: 'Annulée', uncollectible: 'Impayée' },
  pdf: 'PDF',
  pdfOf: (n) => `PDF de la facture ${n}`,
  pdfHint: 'Les liens PDF sont valables 5 minutes ; rechargez la page pour les renouveler.',
  creditBalance: (amounts) => `Solde créditeur : ${amounts}. Il est déduit de vos prochaines factures avant tout prélèvement sur votre moyen de paiement.`,
  sessionEnds: (t) => `Cette page reste ouverte jusqu’à ${t} UTC.`,
  txType: { credit: 'Crédit', debit: 'Débit', topup: 'Rechargement', expiry: 'Crédit expiré', refund: 'Remboursement', refund_reversal: 'Remboursement annulé' },
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
  notFound: { checkout: 'Paiement introuvable', setup: 'Page introuvable', portal: 'Page introuvable' },
  notFoundText: 'Ce lien n’est pas valide. Demandez-en un nouveau au marchand.',
  expired: { checkout: 'Ce lien de paiement a expiré', setup: 'Ce lien a expiré', portal: 'Cette session a expiré' },
  expiredText: 'Le lien n’est plus valide. Demandez-en un nouveau au marchand.',
  reload: 'Recharger la page de paiement',
  errSession: 'Votre session a expiré. Rechargez la page et réessayez.',
  errMethod: 'Choisissez un moyen de paiement.',
  errCardMissing: 'Saisissez le numéro de carte.',
  errCardNumber: 'Le numéro de carte est incorrect.',
  errExpiry: 'Saisissez la date d’expiration au format MM/AA.',
  errExpired: 'Votre carte a expiré.',
  errExpiryMonth: 'Le mois d’expiration doit être compris entre 01 et 12.',
  errCvc: 'Saisissez le code de sécurité à 3 ou 4 chiffres.',
  errSummary: 'Vérifiez les points suivants :',
  expiryPlaceholder: 'MM/AA',
  tryLater: 'Rien n’a été débité. Réessayez dans quelques minutes.',
  lastAttemptFailed: (r) => `Votre dernière tentative de paiement a échoué : ${r} Saisissez une carte ou un autre moyen ci-dessous pour payer.`,
  removeConfirmTitle: 'Supprimer votre seul moyen de paiement ?',
  removeConfirmText: (m, p) => `${m} est le seul moyen de paiement de votre compte, et ${p} en a encore besoin. Sans lui, le prochain paiement ne pourra pas être effectué : il échouera et l’abonnement pourra prendre fin. Ajoutez d’abord un autre moyen pour l’éviter.`,
  removeAnyway: 'Supprimer quand même',
  keepMethod: 'Conserver ce moyen de paiement',
  cancelConfirmTitle: 'Résilier votre abonnement ?',
  cancelConfirmText: (p, d) => `Votre abonnement ${p} prendra fin le ${d}, à la fin de la période en cours. Vous en profitez jusque-là, et aucune nouvelle période ne sera facturée.`,
  cancelTrialConfirmText: (p, d) => `Votre essai de ${p} prendra fin le ${d} et l’abonnement ne commencera pas : rien ne sera débité.`,
  confirmCancel: 'Résilier mon abonnement',
  goBack: 'Revenir sans rien changer',
  errPhone: 'Saisissez le numéro au format international, par ex. +221770000001.',
  errName: 'Saisissez à nouveau votre nom : il est trop long ou contient des caractères non acceptés.',
  errEmail: 'Saisissez une adresse e-mail valide, par ex. nom@exemple.fr.',
  errText: 'Un champ contient des caractères non acceptés. Vérifiez votre saisie et réessayez.',
  errConflict: 'Impossible de le faire : la situation a changé entre-temps. L’état actuel est affiché ci-dessous.',
  badForm: 'Le formulaire n’a pas pu être lu',
  badFormText: 'Revenez en arrière, rechargez la page et réessayez.',
  tooManyAttempts: 'Trop de tentatives',
  setupAttemptsSpent: (m) => `Trop de moyens de paiement ont été refusés sur ce lien : il n’en accepte plus. Demandez un nouveau lien à ${m}.`,
  checkoutAttemptsSpent: (m) => `Ce paiement a été refusé trop de fois : il n’accepte plus de tentative. Revenez chez ${m} pour recommencer.`,
  errTooManyFromAddress: (n) => `Trop de tentatives de paiement refusées depuis votre réseau. Réessayez dans ${n} minute${n === 1 ? '' : 's'}.`,
  errSetupLinksSpent: (m) => `Vous avez commencé trop d’ajouts de moyen de paiement dans cette session. Rouvrez votre compte depuis ${m} pour en ajouter un autre.`,
  portalLinkUsed: 'Ce lien a déjà été utilisé',
  portalLinkUsedText: (m) => `Par sécurité, un lien vers votre compte ne s’ouvre qu’une fois. Demandez-en un nouveau à ${m}.`,
};

export const strings = { en, fr } as const;
