"""Sample-data topics of the billing_qa and hr_policy features (see annotate.demo.content).

Pure data: each Fact says only what its Doc says; `wrong` rewrites and extras must not be
supported by the docs. No randomness here.
"""

from __future__ import annotations

from annotate.demo.content import Doc, Extra, Fact, Topic

BILLING = (
    Topic(
        "duplicate_charge", "billing_qa", "financial", 0.32,
        {"customer": ("person",), "amount": ("money", 9, 480), "charge_date": ("date", -20, -1),
         "refund_days": ("dur", 3, 10), "last4": ("id", 1000, 9999), "credit": ("money0", 5, 25),
         "ref": ("id", 100000, 999999), "acct": ("id", 10000, 99999)},
        (("I was charged {amount} twice on {charge_date}. Can I get one of them back?", 0),
         ("Why are there two charges of {amount} on my card ending {last4}?", 2),
         ("Hi, it's {customer}. I paid twice this month, what happens now?", 0),
         ("Double charge on {charge_date}, how long until the refund?", 0),
         ("Do I need to call my bank about a double charge?", 4),
         ("Will the refund go back to my card or become account credit?", 1)),
        (Doc("kb/billing-0142", "Duplicate charges. When a payment is captured twice, the second "
             "charge is refunded automatically within {refund_days} business days. The refund "
             "goes to the original payment method; the customer does not need to do anything."),
         Doc("crm/accounts/{acct}", "Account {acct} ({customer}): two charges of {amount} "
             "captured on {charge_date} on the card ending {last4}. The second charge is "
             "flagged as a duplicate.")),
        (Fact(0, "The duplicate charge will be refunded automatically within {refund_days} "
              "business days.", (("negation", "The duplicate charge won't be refunded "
                                  "automatically, so you'll need to request it."),)),
         Fact(0, "The money goes back to your original payment method.", (("relation", "The "
              "money is added to your account as credit rather than returned to your card."),)),
         Fact(1, "I can see two charges of {amount} on {charge_date} on your card ending "
              "{last4}."),
         Fact(1, "The second charge has already been flagged as a duplicate.",
              (("negation", "Neither charge has been flagged as a duplicate yet."),)),
         Fact(0, "You don't need to do anything to get the refund.",
              (("negation", "You'll need to contact your bank to get the refund."),))),
        (Extra("fabricated_detail", "The duplicate will be refunded within {refund_days} business "
               "days, and you'll get a text message when it lands.", 0),
         Extra("overgeneralization", "The second charge of {amount} is flagged as a duplicate, "
               "and every other payment on your account has been reviewed too.", 1)),
        (Extra("fabricated_detail", "We've also added a {credit} courtesy credit to your account "
               "for the trouble."),
         Extra("causal", "The double charge happened because your bank retried the payment after "
               "a timeout."),
         Extra("attribution", "Our finance team confirmed this morning that the refund is "
               "approved."),
         Extra("fabricated_detail", "You'll receive a confirmation email with reference "
               "RF-{ref} once it's processed.")),
    ),
    Topic(
        "invoice_late_fee", "billing_qa", "financial", 0.30,
        {"invoice": ("id", 20000, 99999), "plan": ("pick", "plan"), "amount": ("money", 29, 2400),
         "due": ("date", 3, 25), "grace": ("dur", 5, 15), "fee_pct": ("pct", 1, 5),
         "cap": ("money0", 25, 100), "pause_days": ("dur", 30, 90)},
        (("When is invoice INV-{invoice} due, and what if I pay late?", 1),
         ("How much do I owe on the {plan} plan this month?", 0),
         ("What's the late fee if INV-{invoice} isn't paid by {due}?", 3),
         ("Will you cut off our account if we pay a week late?", 4),
         ("Can I pay INV-{invoice} by bank transfer?", 2)),
        (Doc("billing/invoices/INV-{invoice}", "Invoice INV-{invoice}. Plan: {plan}. Total due: "
             "{amount}. Due date: {due}. Payment methods: card, bank transfer."),
         Doc("kb/billing-0207", "Late payments. Invoices still unpaid {grace} days after the due "
             "date incur a late fee of {fee_pct} of the outstanding balance. Late payment does "
             "not suspend service; accounts are paused only after {pause_days} days without "
             "payment.")),
        (Fact(0, "Invoice INV-{invoice} for your {plan} plan comes to {amount}."),
         Fact(0, "It's due on {due}."),
         Fact(0, "You can pay it by card or bank transfer.",
              (("entity", "You can pay it by card or PayPal."),)),
         Fact(1, "If it's still unpaid {grace} days after the due date, a late fee of {fee_pct} "
              "of the balance is added."),
         Fact(1, "Paying late won't suspend your service; an account is only paused after "
              "{pause_days} days without payment.",
              (("negation", "Paying late suspends your service right away."),))),
        (Extra("fabricated_detail", "A late fee of {fee_pct} applies after {grace} days, capped "
               "at {cap} per invoice.", 1),
         Extra("overgeneralization", "INV-{invoice} is due on {due}, and all your future invoices "
               "will be due on the same day of the month.", 0)),
        (Extra("fabricated_detail", "You can also split the amount into three monthly "
               "installments at no extra cost."),
         Extra("attribution", "Your account manager has already approved an extension for this "
               "invoice."),
         Extra("causal", "The total is higher this month because two seats were added to your "
               "workspace.")),
    ),
    Topic(
        "plan_change", "billing_qa", "financial", 0.22,
        {"plan_from": ("pick", "small_plan"), "plan_to": ("pick", "big_plan"),
         "price_to": ("money0", 19, 249), "credit": ("money", 4, 90), "days_left": ("dur", 4, 26),
         "next_invoice": ("date", 4, 27), "quote": ("id", 1000, 9999)},
        (("If I upgrade from {plan_from} to {plan_to} today, what will I pay?", 1),
         ("How does proration work if we move to {plan_to} mid-month?", 2),
         ("Do I lose money if I switch from {plan_from} to {plan_to} now?", 2),
         ("When does an upgrade to {plan_to} kick in?", 0),
         ("What happens if we downgrade later instead?", 5)),
        (Doc("kb/billing-0311", "Plan changes. Upgrades take effect immediately, and the unused "
             "part of the current plan is credited pro rata on the next invoice. Downgrades take "
             "effect at the end of the billing period."),
         Doc("billing/quotes/Q-{quote}", "Upgrade quote Q-{quote}: {plan_from} to {plan_to}. New "
             "price {price_to} per month. Proration credit {credit} for the {days_left} days "
             "left in the current period. Next invoice: {next_invoice}.")),
        (Fact(0, "Upgrades take effect immediately.", (("temporal", "Upgrades only take effect "
              "at the start of your next billing period."),)),
         Fact(1, "The {plan_to} plan costs {price_to} per month."),
         Fact(1, "You'll get a credit of {credit} for the {days_left} days left on your "
              "{plan_from} plan."),
         Fact(0, "That credit is applied to your next invoice.", (("relation", "That credit is "
              "refunded to your card instead of applied to an invoice."),)),
         Fact(1, "Your next invoice will be issued on {next_invoice}."),
         Fact(0, "If you downgrade instead, the change happens at the end of the billing period.",
              (("temporal", "If you downgrade instead, the change happens immediately."),))),
        (Extra("fabricated_detail", "The {plan_to} plan costs {price_to} per month and includes "
               "priority phone support.", 1),
         Extra("overgeneralization", "Upgrades take effect immediately, and the same goes for "
               "every add-on you buy.", 0)),
        (Extra("fabricated_detail", "Upgrading also unlocks a 14-day free trial of the analytics "
               "add-on."),
         Extra("overgeneralization", "You can switch plans as often as you like at no cost."),
         Extra("attribution", "Our sales team usually recommends the {plan_to} plan for teams "
               "your size.")),
    ),
    Topic(
        "payment_data", "billing_qa", "privacy", 0.16,
        {"owner": ("person",), "admin": ("person",), "last4": ("id", 1000, 9999),
         "retention": ("dur", 14, 90), "workspace": ("pick", "workspace")},
        (("Who in {workspace} can see our invoices?", 2),
         ("If I remove the card ending {last4}, how long do you keep it?", 1),
         ("Do you store my full credit card number?", 0),
         ("Who is the billing admin for {workspace}?", 3)),
        (Doc("kb/billing-0455", "Payment data. Full card numbers are stored only by our payment "
             "processor; we see the last four digits. A removed payment method is deleted from "
             "the processor within {retention} days. Only workspace owners and billing admins "
             "can view invoices."),
         Doc("admin/workspaces/{workspace}/roles", "Workspace {workspace}: owner {owner}; billing "
             "admin {admin}. Card on file ending {last4}.")),
        (Fact(0, "We never store your full card number ourselves; we only see the last four "
              "digits.", (("negation", "We keep your full card number on file so we can retry "
                           "failed payments."),)),
         Fact(0, "Once you remove the card ending {last4}, our payment processor deletes it "
              "within {retention} days."),
         Fact(0, "Only workspace owners and billing admins can view invoices.",
              (("overgeneralization", "Every member of your workspace can view invoices."),)),
         Fact(1, "{owner} is the owner of the {workspace} workspace, and {admin} is its billing "
              "admin.", (("relation", "{admin} is the owner of the {workspace} workspace, and "
                          "{owner} is its billing admin."),))),
        (Extra("fabricated_detail", "Removed cards are deleted within {retention} days, and "
               "you'll get a deletion certificate by email.", 0),),
        (Extra("fabricated_detail", "Card data is encrypted with a key that rotates every 24 "
               "hours."),
         Extra("attribution", "Our data protection officer personally reviews every request "
               "about billing data."),
         Extra("overgeneralization", "This setup is compliant with every national privacy "
               "law.")),
    ),
)  # fmt: skip

HR = (
    Topic(
        "expenses", "hr_policy", "financial", 0.30,
        {"employee": ("person",), "emp": ("id", 10000, 99999), "approver": ("person",),
         "meal_cap": ("money0", 35, 90), "hotel_cap": ("money0", 120, 320),
         "submit_days": ("dur", 15, 60), "city": ("pick", "city")},
        (("What's the hotel limit for my {city} trip?", 1),
         ("How long do I have to submit expenses after travelling?", 2),
         ("Can I expense dinner with wine on a business trip?", 3),
         ("Who signs off my expenses for the {city} trip?", 4),
         ("What's the daily meal allowance when travelling?", 0)),
        (Doc("policy/HR-204#4", "Travel and expenses, section 4. Meals are reimbursed up to "
             "{meal_cap} per day and hotels up to {hotel_cap} per night. Claims must be submitted "
             "within {submit_days} days of the trip, with itemized receipts. Alcohol is not "
             "reimbursable."),
         Doc("workday/workers/{emp}", "Employee: {employee}. Expense approver: "
             "{approver}. Upcoming trip: {city}.")),
        (Fact(0, "Meals are covered up to {meal_cap} per day."),
         Fact(0, "Hotels are reimbursed up to {hotel_cap} per night."),
         Fact(0, "You have {submit_days} days after the trip to submit your claim, with itemized "
              "receipts."),
         Fact(0, "Alcohol isn't reimbursable.",
              (("negation", "Alcohol is reimbursable as part of the meal allowance."),)),
         Fact(1, "Your expenses for the {city} trip are approved by {approver}.")),
        (Extra("fabricated_detail", "Meals are covered up to {meal_cap} per day, and taxis to the "
               "airport are always covered in full.", 0),
         Extra("overgeneralization", "Hotels are reimbursed up to {hotel_cap} per night, and the "
               "same cap applies in every country.", 0)),
        (Extra("fabricated_detail", "Reimbursements are paid with the next payroll run, usually "
               "within five working days."),
         Extra("attribution", "Finance confirmed last week that these caps will rise next "
               "quarter."),
         Extra("fabricated_detail", "Business-class flights are allowed for trips over six "
               "hours.")),
    ),
    Topic(
        "parental_leave", "hr_policy", "financial", 0.22,
        {"hr_contact": ("person",), "weeks_full": ("count", 8, 20), "weeks_half": ("count", 4, 12),
         "notice": ("dur", 4, 12), "months": ("count", 3, 12), "pol": ("id", 100, 399)},
        (("How much paid parental leave do I get?", 0),
         ("Our baby is due in {notice} weeks, is it too late to request leave?", 3),
         ("Who do I talk to about parental leave?", 4),
         ("I joined {months} months ago, can I take parental leave?", 2),
         ("Where do I submit a parental leave request?", 5)),
        (Doc("policy/HR-{pol}", "Parental leave. Employees with at least {months} months of "
             "service receive {weeks_full} weeks of leave at full pay, followed by {weeks_half} "
             "weeks at half pay. Leave must be requested at least {notice} weeks before the "
             "expected start date."),
         Doc("hr/contacts", "HR business partner for your team: {hr_contact}. Leave requests are "
             "submitted in the HR portal under Time Off.")),
        (Fact(0, "You get {weeks_full} weeks of parental leave at full pay."),
         Fact(0, "After that, there are {weeks_half} more weeks at half pay."),
         Fact(0, "You're eligible once you've completed {months} months of service."),
         Fact(0, "Please request the leave at least {notice} weeks before it starts."),
         Fact(1, "Your HR business partner is {hr_contact}."),
         Fact(1, "You submit the request in the HR portal under Time Off.",
              (("entity", "You submit the request by email to the payroll team."),))),
        (Extra("fabricated_detail", "You get {weeks_full} weeks at full pay, and the leave can be "
               "split into up to three blocks.", 0),
         Extra("overgeneralization", "You're eligible after {months} months of service, and so "
               "are contractors and part-time staff.", 0)),
        (Extra("fabricated_detail", "The company also pays a one-off childcare bonus when you "
               "return to work."),
         Extra("causal", "The policy was extended because of the new state family-leave law."),
         Extra("attribution", "Your manager has already been told about your leave.")),
    ),
    Topic(
        "personnel_records", "hr_policy", "privacy", 0.30,
        {"dpo": ("person",), "response_days": ("dur", 10, 30), "years": ("dur", 3, 10),
         "bg_months": ("dur", 6, 24)},
        (("Can my manager see my old performance reviews?", 1),
         ("How long do you keep my records after I leave?", 2),
         ("How do I get a copy of my personnel file?", 0),
         ("What happens to my background check report?", 3),
         ("Who handles questions about my personal data?", 4)),
        (Doc("policy/HR-118", "Personnel records. Employees may request a copy of their "
             "personnel file; HR responds within {response_days} days. Managers can see the "
             "performance reviews of their direct reports only. Records are kept for {years} "
             "years after employment ends."),
         Doc("policy/HR-119", "Background check reports are deleted {bg_months} months after "
             "the hiring decision. Questions about personal data go to the data protection "
             "officer, {dpo}.")),
        (Fact(0, "You can request a copy of your personnel file, and HR will respond within "
              "{response_days} days."),
         Fact(0, "Managers can only see performance reviews of their own direct reports.",
              (("overgeneralization", "Any manager in the company can see your performance "
                "reviews."),)),
         Fact(0, "Your records are kept for {years} years after you leave."),
         Fact(1, "Background check reports are deleted {bg_months} months after the hiring "
              "decision.", (("negation", "Background check reports are kept in your file "
                            "permanently."),)),
         Fact(1, "You can contact our data protection officer, {dpo}, with questions about your "
              "data.")),
        (Extra("fabricated_detail", "HR responds to file requests within {response_days} days "
               "and sends the copy as an encrypted PDF.", 0),),
        (Extra("fabricated_detail", "Medical notes are stored in a separate system that HR "
               "cannot access."),
         Extra("attribution", "Legal has said these rules come straight from the GDPR."),
         Extra("overgeneralization", "Your colleagues can never see any of your personal "
               "details.")),
    ),
    Topic(
        "injury_reporting", "hr_policy", "safety", 0.18,
        {"officer": ("person",), "hours": ("dur", 4, 48), "site": ("pick", "site"),
         "floor": ("count", 1, 6)},
        (("I twisted my ankle on the stairs at {site}, do I need to report it?", 1),
         ("Who is the safety officer at {site}?", 3),
         ("Am I paid for physio visits after a workplace injury?", 2),
         ("How soon do I have to report a workplace injury?", 0),
         ("Where is the first-aid room at {site}?", 4)),
        (Doc("policy/HS-031", "Workplace injuries must be reported to the site safety officer "
             "within {hours} hours, even when no treatment is needed. Employees are paid "
             "normally for time spent at medical appointments related to the injury."),
         Doc("sites/safety-contacts", "Site safety officer, {site}: {officer}. The first-aid "
             "room is on floor {floor}.")),
        (Fact(0, "Injuries need to be reported within {hours} hours."),
         Fact(0, "You have to report it even if you didn't need treatment.",
              (("negation", "You only need to report it if you needed treatment."),)),
         Fact(0, "You're paid normally for medical appointments related to the injury.",
              (("negation", "Time spent at medical appointments is unpaid."),)),
         Fact(1, "The safety officer for {site} is {officer}."),
         Fact(1, "The first-aid room is on floor {floor}.")),
        (Extra("fabricated_detail", "Report the injury within {hours} hours, using form SF-12 in "
               "the safety portal.", 0),),
        (Extra("fabricated_detail", "Injuries are also covered by a supplementary insurance that "
               "pays 80% of physiotherapy costs."),
         Extra("causal", "Most injuries on this site are caused by wet floors near the loading "
               "dock."),
         Extra("attribution", "The safety committee has said late reports can lead to "
               "disciplinary action.")),
    ),
)  # fmt: skip
