// The customer e-mails' templates (Handlebars): one HTML layout and one text layout shared by every
// message, and per message and locale the wording, itself Handlebars templates over the message's
// values. The HTML layout escapes every value (names, plan names and amounts never become markup);
// the text layout and the wordings are compiled with noEscape. Locales: those of the hosted pages.
import Handlebars from 'handlebars';
import { DECLINE_OTHER, DECLINE_REASONS as REASONS } from '../payments/decline-reasons.ts';

export const EMAIL_LOCALES = ['en', 'fr'] as const;
export type EmailLocale = (typeof EMAIL_LOCALES)[number];

/** What a message is about: each event type with an e-mail has one. */
export type MessageType = 'payment_receipt' | 'invoice_receipt' | 'invoice_payment_failed' | 'trial_will_end' | 'upcoming_renewal' | 'invoice_to_pay';

/** The values a message's wording refers to (all already formatted for its locale). */
export interface MessageValues {
  merchant: string;
  customer_name: string;
  amount?: string;
  number?: string;
  date?: string;
  reason?: string;
  next_attempt?: string;
  plan?: string;
  price?: string;
  method?: string;
  reference?: string;
}

interface Wording {
  subject: string;
  heading: string;
  paragraphs: string[];
  /** label: value rows, each part a template; rows whose value is empty are left out */
  details: [string, string][];
  /** the button's label (the message's link) */
  action?: string;
  footer: string;
}

const WORDING: Record<EmailLocale, Record<MessageType, Wording>> = {
  en: {
    payment_receipt: {
      subject: 'Your receipt from {{merchant}}',
      heading: 'Payment received: {{amount}}',
      paragraphs: ['Hello {{customer_name}},', 'Thank you for your payment to {{merchant}}. This is your receipt.'],
      details: [['Amount paid', '{{amount}}'], ['Date', '{{date}}'], ['Payment method', '{{method}}'], ['Reference', '{{reference}}']],
      footer: 'You receive this e-mail because you paid {{merchant}}.',
    },
    invoice_receipt: {
      subject: 'Receipt for invoice {{number}} from {{merchant}}',
      heading: 'Invoice {{number}} is paid',
      paragraphs: ['Hello {{customer_name}},', 'We received your payment of {{amount}} for invoice {{number}}. Thank you.'],
      details: [['Amount paid', '{{amount}}'], ['Invoice', '{{number}}'], ['Paid on', '{{date}}'], ['Plan', '{{plan}}']],
      action: 'Download the invoice (PDF)',
      footer: 'You receive this e-mail because you have a subscription with {{merchant}}.',
    },
    invoice_payment_failed: {
      subject: 'Your payment to {{merchant}} did not go through',
      heading: 'We could not charge {{amount}}',
      paragraphs: [
        'Hello {{customer_name}},',
        'We tried to charge {{amount}} for invoice {{number}}, but {{reason}}',
        '{{#if next_attempt}}Please update your payment method to keep your subscription active.{{else}}No further automatic attempt will be made: pay this invoice with a working payment method from the link below.{{/if}}',
      ],
      details: [['Amount due', '{{amount}}'], ['Invoice', '{{number}}'], ['Next attempt', '{{next_attempt}}']],
      action: 'Update your payment method',
      footer: 'You receive this e-mail because you have a subscription with {{merchant}}.',
    },
    trial_will_end: {
      subject: 'Your {{plan}} trial with {{merchant}} ends on {{date}}',
      heading: 'Your trial ends on {{date}}',
      paragraphs: ['Hello {{customer_name}},', 'Your free trial of {{plan}} ends on {{date}}. After that, your subscription continues at {{price}}.', 'No action is needed to continue. To change or cancel your subscription, manage it below.'],
      details: [['Plan', '{{plan}}'], ['Trial ends', '{{date}}'], ['Price after the trial', '{{price}}']],
      action: 'Manage your subscription',
      footer: 'You receive this e-mail because you started a trial with {{merchant}}.',
    },
    upcoming_renewal: {
      subject: 'Your {{plan}} subscription with {{merchant}} renews on {{date}}',
      heading: 'Your subscription renews on {{date}}',
      paragraphs: [
        'Hello {{customer_name}},',
        'Your {{plan}} subscription renews on {{date}}. We will charge {{amount}}{{#if method}} to your {{method}}{{/if}}.',
        'No action is needed to continue. To update your payment method, or to change or cancel your subscription, manage it below.',
      ],
      details: [['Plan', '{{plan}}'], ['Renewal date', '{{date}}'], ['Amount', '{{amount}}'], ['Payment method', '{{method}}']],
      action: 'Manage your subscription',
      footer: 'You receive this e-mail because you have a subscription with {{merchant}}.',
    },
    invoice_to_pay: {
      subject: 'Invoice {{number}} from {{merchant}}: {{amount}} due {{date}}',
      heading: 'Invoice {{number}}: {{amount}} due',
      paragraphs: ['Hello {{customer_name}},', '{{merchant}} sent you invoice {{number}} for {{amount}}, due on {{date}}.', 'You can view it and pay it by card from the link below.'],
      details: [['Amount due', '{{amount}}'], ['Invoice', '{{number}}'], ['Due date', '{{date}}']],
      action: 'View and pay the invoice',
      footer: 'You receive this e-mail because {{merchant}} sent you an invoice.',
    },
  },
  fr: {
    payment_receipt: {
      subject: 'Votre reçu de {{merchant}}',
      heading: 'Paiement reçu : {{amount}}',
      paragraphs: ['Bonjour {{customer_name}},', 'Merci pour votre paiement à {{merchant}}. Voici votre reçu.'],
      details: [['Montant payé', '{{amount}}'], ['Date', '{{date}}'], ['Moyen de paiement', '{{method}}'], ['Référence', '{{reference}}']],
      footer: 'Vous recevez cet e-mail parce que vous avez payé {{merchant}}.',
    },
    invoice_receipt: {
      subject: 'Reçu de la facture {{number}} de {{merchant}}',
      heading: 'La facture {{number}} est payée',
      paragraphs: ['Bonjour {{customer_name}},', 'Nous avons bien reçu votre paiement de {{amount}} pour la facture {{number}}. Merci.'],
      details: [['Montant payé', '{{amount}}'], ['Facture', '{{number}}'], ['Payée le', '{{date}}'], ['Offre', '{{plan}}']],
      action: 'Télécharger la facture (PDF)',
      footer: 'Vous recevez cet e-mail parce que vous avez un abonnement chez {{merchant}}.',
    },
    invoice_payment_failed: {
      subject: 'Votre paiement à {{merchant}} n’a pas abouti',
      heading: 'Nous n’avons pas pu prélever {{amount}}',
      paragraphs: [
        'Bonjour {{customer_name}},',
        'Nous avons tenté de prélever {{amount}} pour la facture {{number}}, mais {{reason}}',
        '{{#if next_attempt}}Mettez à jour votre moyen de paiement pour garder votre abonnement actif.{{else}}Aucune autre tentative automatique ne sera faite : réglez cette facture avec un moyen de paiement valide depuis le lien ci-dessous.{{/if}}',
      ],
      details: [['Montant dû', '{{amount}}'], ['Facture', '{{number}}'], ['Prochaine tentative', '{{next_attempt}}']],
      action: 'Mettre à jour le moyen de paiement',
      footer: 'Vous recevez cet e-mail parce que vous avez un abonnement chez {{merchant}}.',
    },
    trial_will_end: {
      subject: 'Votre essai de {{plan}} chez {{merchant}} se termine le {{date}}',
      heading: 'Votre essai se termine le {{date}}',
      paragraphs: ['Bonjour {{customer_name}},', 'Votre essai gratuit de {{plan}} se termine le {{date}}. Ensuite, votre abonnement continue à {{price}}.', 'Vous n’avez rien à faire pour continuer. Pour modifier ou résilier votre abonnement, gérez-le ci-dessous.'],
      details: [['Offre', '{{plan}}'], ['Fin de l’essai', '{{date}}'], ['Prix après l’essai', '{{price}}']],
      action: 'Gérer votre abonnement',
      footer: 'Vous recevez cet e-mail parce que vous avez commencé un essai chez {{merchant}}.',
    },
    upcoming_renewal: {
      subject: 'Votre abonnement {{plan}} chez {{merchant}} sera renouvelé le {{date}}',
      heading: 'Votre abonnement sera renouvelé le {{date}}',
      paragraphs: [
        'Bonjour {{customer_name}},',
        'Votre abonnement {{plan}} sera renouvelé le {{date}}. Nous prélèverons {{amount}}{{#if method}} sur votre {{method}}{{/if}}.',
        'Vous n’avez rien à faire pour continuer. Pour mettre à jour votre moyen de paiement, ou pour modifier ou résilier votre abonnement, gérez-le ci-dessous.',
      ],
      details: [['Offre', '{{plan}}'], ['Date de renouvellement', '{{date}}'], ['Montant', '{{amount}}'], ['Moyen de paiement', '{{method}}']],
      action: 'Gérer votre abonnement',
      footer: 'Vous recevez cet e-mail parce que vous avez un abonnement chez {{merchant}}.',
    },
    invoice_to_pay: {
      subject: 'Facture {{number}} de {{merchant}} : {{amount}} à régler avant le {{date}}',
      heading: 'Facture {{number}} : {{amount}} à régler',
      paragraphs: ['Bonjour {{customer_name}},', '{{merchant}} vous a envoyé la facture {{number}} de {{amount}}, à régler avant le {{date}}.', 'Vous pouvez la consulter et la payer par carte depuis le lien ci-dessous.'],
      details: [['Montant dû', '{{amount}}'], ['Facture', '{{number}}'], ['Échéance', '{{date}}']],
      action: 'Voir et payer la facture',
      footer: 'Vous recevez cet e-mail parce que {{merchant}} vous a envoyé une facture.',
    },
  },
};

/** Why a charge failed, completing "… but {{reason}}", per locale (the invoice's last_payment_error code): the hosted pages' table. */
export const DECLINE_REASONS: Record<EmailLocale, Record<string, string> & { other: string }> = {
  en: { ...REASONS.en, other: DECLINE_OTHER.en },
  fr: { ...REASONS.fr, other: DECLINE_OTHER.fr },
};

/** "Visa ending in 4242" / "Mobile money ending in 1234", per locale. */
export const METHOD_NAMES: Record<EmailLocale, { card: string; mobile_money: string }> = {
  en: { card: '{{brand}} ending in {{last4}}', mobile_money: 'Mobile money ending in {{last4}}' },
  fr: { card: '{{brand}} se terminant par {{last4}}', mobile_money: 'Mobile money se terminant par {{last4}}' },
};

const hb = Handlebars.create();
const compileText = (t: string) => hb.compile(t, { noEscape: true, strict: false });

const HTML_LAYOUT = hb.compile(
  `<!doctype html>
<html lang="{{lang}}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{subject}}</title></head>
<body style="margin:0;padding:24px 12px;background:#f4f5f7;font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1f2328;line-height:1.5">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px">
<tr><td style="padding:32px">
<p style="margin:0 0 16px;font-size:14px;color:#57606a">{{merchant}}</p>
<h1 style="margin:0 0 16px;font-size:22px;font-weight:600">{{heading}}</h1>
{{#each paragraphs}}<p style="margin:0 0 12px">{{this}}</p>
{{/each}}
{{#if details}}<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="margin:16px 0;border-top:1px solid #d0d7de">
{{#each details}}<tr><td style="padding:8px 0;border-bottom:1px solid #d0d7de;color:#57606a">{{label}}</td><td style="padding:8px 0;border-bottom:1px solid #d0d7de;text-align:right"><strong>{{value}}</strong></td></tr>
{{/each}}</table>{{/if}}
{{#if action}}<p style="margin:24px 0"><a href="{{action.url}}" style="display:inline-block;padding:12px 20px;background:#0969da;color:#ffffff;border-radius:6px;text-decoration:none;font-weight:600">{{action.label}}</a></p>
<p style="margin:0 0 12px;font-size:12px;color:#57606a">{{action.hint}} <a href="{{action.url}}" style="color:#0969da;word-break:break-all">{{action.url}}</a></p>{{/if}}
<p style="margin:24px 0 0;font-size:12px;color:#57606a">{{footer}}</p>
</td></tr></table>
</td></tr></table>
</body>
</html>
`,
  { strict: false },
);

const TEXT_LAYOUT = compileText(`{{merchant}}

{{heading}}

{{#each paragraphs}}{{this}}

{{/each}}{{#each details}}{{label}}: {{value}}
{{/each}}{{#if action}}
{{action.label}}:
{{action.url}}
{{/if}}
--
{{footer}}
`);

const LINK_HINT: Record<EmailLocale, string> = {
  en: 'Or open this address:',
  fr: 'Ou ouvrez cette adresse :',
};

interface CompiledWording {
  subject: HandlebarsTemplateDelegate;
  heading: HandlebarsTemplateDelegate;
  paragraphs: HandlebarsTemplateDelegate[];
  details: [HandlebarsTemplateDelegate, HandlebarsTemplateDelegate][];
  action?: HandlebarsTemplateDelegate;
  footer: HandlebarsTemplateDelegate;
}

const COMPILED = Object.fromEntries(
  EMAIL_LOCALES.map((l) => [
    l,
    Object.fromEntries(
      Object.entries(WORDING[l]).map(([type, w]) => [
        type,
        {
          subject: compileText(w.subject),
          heading: compileText(w.heading),
          paragraphs: w.paragraphs.map(compileText),
          details: w.details.map(([a, b]) => [compileText(a), compileText(b)]),
          action: w.action === undefined ? undefined : compileText(w.action),
          footer: compileText(w.footer),
        } satisfies CompiledWording,
      ]),
    ),
  ]),
) as Record<EmailLocale, Record<MessageType, CompiledWording>>;

/** A small Handlebars template over a few values (method names), with noEscape: the layout escapes. */
export function fill(template: string, values: Record<string, string>): string {
  return compileText(template)(values);
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** The message of `type` in `locale` with its values and its link (if the message has one). */
export function renderEmail(type: MessageType, locale: EmailLocale, values: MessageValues, link?: string): RenderedEmail {
  const w = COMPILED[locale][type];
  const subject = w.subject(values).replace(/[\r\n]+/g, ' ');
  const details = w.details
    .map(([label, value]) => ({ label: label(values), value: value(values).trim() }))
    .filter((d) => d.value !== '');
  const view = {
    lang: locale,
    subject,
    merchant: values.merchant,
    heading: w.heading(values),
    paragraphs: w.paragraphs.map((p) => p(values)),
    details,
    action: w.action && link ? { label: w.action(values), url: link, hint: LINK_HINT[locale] } : undefined,
    footer: w.footer(values),
  };
  return { subject, text: TEXT_LAYOUT(view), html: HTML_LAYOUT(view) };
}
