// Why a payment failed, in words a customer reads, per locale and failure code — completing "The
// payment did not go through: …" on the hosted pages and "… but {{reason}}" in the customer
// e-mails (one table for both). A code without its own sentence reads as DECLINE_OTHER.
export const DECLINE_REASONS: Record<'en' | 'fr', Record<string, string>> = {
  en: {
    card_declined: 'the card was declined.',
    insufficient_funds: 'the card has insufficient funds.',
    mobile_money_declined: 'the mobile money payment was declined.',
    no_payment_method: 'there is no payment method to charge.',
    payment_method_detached: 'the payment method was removed.',
    processing_error: 'an error occurred while processing the payment.',
    processor_unavailable: 'the payment service is unavailable for now.',
    payment_expired: 'the payment page expired before the payment was made.',
  },
  fr: {
    card_declined: 'la carte a été refusée.',
    insufficient_funds: 'le solde de la carte est insuffisant.',
    mobile_money_declined: 'le paiement mobile money a été refusé.',
    no_payment_method: 'aucun moyen de paiement n’est enregistré.',
    payment_method_detached: 'le moyen de paiement a été supprimé.',
    processing_error: 'une erreur est survenue pendant le traitement du paiement.',
    processor_unavailable: 'le service de paiement est indisponible pour le moment.',
    payment_expired: 'la page de paiement a expiré avant le paiement.',
  },
};

export const DECLINE_OTHER: Record<'en' | 'fr', string> = {
  en: 'the payment was refused.',
  fr: 'le paiement a été refusé.',
};
