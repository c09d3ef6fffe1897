"""Sample-data topics of the medical_info and code_assistant features (see annotate.demo.content).

Pure data: each Fact says only what its Doc says; `wrong` rewrites and extras must not be
supported by the docs. No randomness here.
"""

from __future__ import annotations

from annotate.demo.content import Doc, Extra, Fact, Topic

MEDICAL = (
    Topic(
        "dosing", "medical_info", "safety", 0.45,
        {"row": ("drug",), "pharmacist": ("person",), "stop_days": ("dur", 3, 10),
         "label": ("id", 10000, 99999)},
        (("How much {drug} can I take in a day?", 1),
         ("Can I take {drug} with {avoid}?", 2),
         ("How often can I take {drug} {dose} mg?", 0),
         ("Is it OK to take two {drug} tablets at once?", 0),
         ("Can my 10-year-old take {drug}?", 3),
         ("My mother is 72, can she take {drug}?", 4)),
        (Doc("dailymed/label-{label}", "Drug facts: {drug} {dose} mg tablets. Adults and children "
             "12 years and over: take 1 tablet every {interval} hours while symptoms last. Do "
             "not take more than {max_daily} mg in 24 hours. Do not use with {avoid}."),
         Doc("pharmacy/notes", "Pharmacist note ({pharmacist}): adults over 65 should start at "
             "the lowest dose and talk to their doctor first. Stop use and ask a doctor if "
             "symptoms last more than {stop_days} days.")),
        (Fact(0, "The usual dose is one {dose} mg tablet of {drug} every {interval} hours."),
         Fact(0, "Don't take more than {max_daily} mg in 24 hours."),
         Fact(0, "You shouldn't take it together with {avoid}.",
              (("negation", "It's fine to take it together with {avoid}."),)),
         Fact(0, "This dosing applies to adults and children 12 and over.",
              (("number", "This dosing applies to adults and children 6 and over."),)),
         Fact(1, "If you're over 65, start at the lowest dose and check with your doctor first.",
              (("negation", "If you're over 65, you can take the usual adult dose without "
                "checking with anyone."),)),
         Fact(1, "Stop and see a doctor if your symptoms last more than {stop_days} days.")),
        (Extra("fabricated_detail", "Take one {dose} mg tablet every {interval} hours, ideally "
               "with a glass of milk.", 0),
         Extra("overgeneralization", "The limit is {max_daily} mg in 24 hours, and the same "
               "limit applies to children of any age.", 0)),
        (Extra("fabricated_detail", "Most people feel the effect within 15 minutes."),
         Extra("causal", "It works by blocking the nerve signals that carry pain to the brain."),
         Extra("attribution", "The FDA updated this guidance in January."),
         Extra("overgeneralization", "It's safe for everyone, including during pregnancy.")),
    ),
    Topic(
        "procedure_prep", "medical_info", "safety", 0.30,
        {"procedure": ("pick", "procedure"), "clinician": ("person",),
         "fast_hours": ("dur", 6, 12), "water_hours": ("dur", 2, 4), "drive_hours": ("dur", 12, 48),
         "followup": ("date", 7, 28), "mrn": ("id", 100000, 999999), "sheet": ("id", 10, 99)},
        (("When do I need to stop eating before my {procedure}?", 0),
         ("Can I drive home after the {procedure}?", 2),
         ("When is my follow-up after the {procedure}?", 4),
         ("Can I drink water on the morning of my {procedure}?", 1),
         ("Who is doing my {procedure}?", 3)),
        (Doc("clinic/prep-sheets/{sheet}", "Preparing for your {procedure}. Do not eat for "
             "{fast_hours} hours before the procedure. Clear water is allowed until {water_hours} "
             "hours before. You will be sedated: do not drive for {drive_hours} hours "
             "afterwards."),
         Doc("ehr/patients/{mrn}/appointments", "Procedure: {procedure} with {clinician}. "
             "Follow-up visit: {followup}.")),
        (Fact(0, "You shouldn't eat for {fast_hours} hours before your {procedure}."),
         Fact(0, "Clear water is fine until {water_hours} hours before.",
              (("negation", "You can't drink anything at all, not even water, on the day."),)),
         Fact(0, "You'll be sedated, so don't drive for {drive_hours} hours afterwards."),
         Fact(1, "Your {procedure} is with {clinician}."),
         Fact(1, "Your follow-up visit is on {followup}.")),
        (Extra("fabricated_detail", "Don't drive for {drive_hours} hours afterwards, and avoid "
               "showering until the next morning.", 0),
         Extra("fabricated_detail", "Your {procedure} is with {clinician}, who will call you the "
               "evening before.", 1)),
        (Extra("fabricated_detail", "The procedure itself usually takes about 40 minutes."),
         Extra("fabricated_detail", "You'll get the sedative through an IV in your left arm."),
         Extra("attribution", "{clinician} recommends a light dinner the night before."),
         Extra("overgeneralization", "Most patients can go straight back to work the same day.")),
    ),
    Topic(
        "records_access", "medical_info", "privacy", 0.18,
        {"patient": ("person",), "proxy": ("person",), "days": ("dur", 10, 30),
         "fee": ("money0", 5, 25), "signed": ("date", -400, -30),
         "relative": ("among", "relative"),
         "mrn": ("id", 100000, 999999)},
        (("Can my {relative} see my test results?", 2),
         ("How do I get a paper copy of my medical records?", 1),
         ("Is {proxy} allowed to look at my records?", 3),
         ("How much does it cost to get my records?", 0)),
        (Doc("clinic/policies/records-release", "Medical records requests. Patients can download "
             "their records from the patient portal at no charge. Paper copies are mailed within "
             "{days} days and cost {fee}. A family member can access records only if the "
             "patient has signed a proxy authorization."),
         Doc("ehr/patients/{mrn}/proxies", "Proxy authorizations for {patient}: {proxy}, signed "
             "{signed}.")),
        (Fact(0, "You can download your records from the patient portal for free.",
              (("negation", "Downloading your records from the portal costs a small fee."),)),
         Fact(0, "Paper copies are mailed within {days} days and cost {fee}."),
         Fact(0, "A family member can only see your records if you've signed a proxy "
              "authorization.", (("overgeneralization", "Close family members can see your "
                                  "records without any authorization."),)),
         Fact(1, "{proxy} signed a proxy authorization on {signed}, so they can access your "
              "records.")),
        (Extra("fabricated_detail", "Paper copies arrive within {days} days and include your "
               "imaging on a CD.", 0),),
        (Extra("fabricated_detail", "Records older than ten years are archived and take longer "
               "to retrieve."),
         Extra("attribution", "Our compliance office says clinics must release records within "
               "48 hours."),
         Extra("overgeneralization", "Your employer can never see any part of your medical "
               "record.")),
    ),
    Topic(
        "coverage", "medical_info", "financial", 0.07,
        {"plan": ("pick", "insurance"), "copay": ("money0", 10, 45),
         "specialist": ("money0", 40, 90),
         "deductible": ("step", (500, 1000, 1500, 2500, 3000), "money"),
         "visits": ("count", 6, 30), "plan_code": ("id", 1000, 9999)},
        (("What's my copay for a specialist on the {plan} plan?", 1),
         ("How many physical therapy visits does my plan cover?", 3),
         ("What is my deductible this year?", 2),
         ("Do I need approval before an MRI?", 4),
         ("How much is a regular doctor's visit on {plan}?", 0)),
        (Doc("insurer/plans/{plan_code}", "{plan} summary of benefits. Primary care visit: "
             "{copay} copay. Specialist visit: {specialist} copay. Annual deductible: "
             "{deductible}. Physical therapy: up to {visits} visits per year."),
         Doc("insurer/prior-auth", "Prior authorization is required for MRI and CT scans and "
             "for planned hospital stays.")),
        (Fact(0, "A primary care visit on the {plan} plan has a {copay} copay."),
         Fact(0, "Seeing a specialist costs {specialist}."),
         Fact(0, "Your annual deductible is {deductible}."),
         Fact(0, "Physical therapy is covered for up to {visits} visits a year."),
         Fact(1, "MRI and CT scans need prior authorization.",
              (("negation", "MRI and CT scans don't need prior authorization."),))),
        (Extra("fabricated_detail", "Physical therapy is covered for up to {visits} visits a "
               "year, with no copay after the tenth visit.", 0),),
        (Extra("fabricated_detail", "Telehealth visits are free on every plan."),
         Extra("overgeneralization", "Emergency care is covered at any hospital worldwide."),
         Extra("causal", "Your deductible went up because of new state rules.")),
    ),
)  # fmt: skip

CODE = (
    Topic(
        "payments_api", "code_assistant", "financial", 0.25,
        {"min_cents": ("step", (30, 50, 100)), "idem_hours": ("step", (24, 48, 72), "dur"),
         "version": ("isodate", -120, -10), "capture_days": ("step", (7, 14, 30), "dur")},
        (("How do I avoid double-charging when POST /v2/payments times out?", 3),
         ("Why does the API reject an amount of 0.5?", 0),
         ("Is `capture` still true by default after the {version} release?", 4),
         ("How do I authorize a payment now and capture it later?", 5),
         ("How long are idempotency keys kept?", 2),
         ("What's the smallest `amount` I can charge?", 1)),
        (Doc("docs/payments-api#create", "POST /v2/payments creates a charge. `amount` is an "
             "integer in the smallest currency unit, with a minimum of {min_cents}. Send an "
             "`Idempotency-Key` header: keys are remembered for {idem_hours} hours, and a retry "
             "with the same key returns the original result instead of charging again."),
         Doc("docs/changelog#{version}", "{version}: `capture` now defaults to `true`. To "
             "authorize only, pass `capture: false` and call POST /v2/payments/{{id}}/capture "
             "within {capture_days} days.")),
        (Fact(0, "`amount` must be an integer in the smallest currency unit, such as cents, not "
              "a decimal.", (("negation", "`amount` accepts a decimal value such as 12.50."),)),
         Fact(0, "The minimum `amount` is {min_cents}."),
         Fact(0, "Idempotency keys are remembered for {idem_hours} hours."),
         Fact(0, "If you retry with the same `Idempotency-Key`, you get the original result back "
              "instead of a second charge.", (("negation", "Retrying with the same "
              "`Idempotency-Key` creates a second charge, so use a new key for each retry."),)),
         Fact(1, "Since the {version} release, `capture` defaults to `true`.",
              (("negation", "Since the {version} release, `capture` defaults to `false`."),)),
         Fact(1, "To authorize only, pass `capture: false` and capture within {capture_days} "
              "days.")),
        (Extra("fabricated_detail", "Idempotency keys are remembered for {idem_hours} hours and "
               "must be valid UUIDs.", 0),),
        (Extra("fabricated_detail", "The endpoint is rate-limited to 25 requests per second per "
               "account."),
         Extra("fabricated_detail", "You can also send `amount_decimal` as a string if you "
               "prefer decimals."),
         Extra("attribution", "The SDK maintainers recommend wrapping this call in a circuit "
               "breaker."),
         Extra("causal", "Double charges usually happen because the client times out before the "
               "response arrives.")),
    ),
    Topic(
        "secrets", "code_assistant", "privacy", 0.25,
        {"rotate_days": ("step", (30, 60, 90), "dur"), "grace_hours": ("dur", 1, 48),
         "vault": ("pick", "vault"), "env_var": ("pick", "env_var"), "owner": ("person",),
         "service": ("pick", "service")},
        (("How often do we rotate the production API key?", 0),
         ("My deploy failed after a key rotation, how long does the old key keep working?", 1),
         ("Where should {service} read `{env_var}` from?", 3),
         ("Can I commit the key to the repo if it's encrypted?", 2),
         ("Who owns security for {service}?", 4)),
        (Doc("eng-handbook/security/secrets", "Secrets policy. Production API keys are rotated "
             "every {rotate_days} days. After a rotation the old key keeps working for "
             "{grace_hours} hours. Services load keys from {vault} at startup; keys are never "
             "committed to a repository."),
         Doc("services/{service}/config", "Service {service}: reads its API key from the "
             "`{env_var}` environment variable. Security contact: {owner}.")),
        (Fact(0, "Production keys are rotated every {rotate_days} days."),
         Fact(0, "The old key keeps working for {grace_hours} hours after a rotation.",
              (("negation", "The old key stops working the moment it's rotated."),)),
         Fact(0, "Keys are loaded from {vault} at startup and never committed to a repository.",
              (("negation", "Keys can be committed to the repository as long as the file is "
                "encrypted."),)),
         Fact(1, "The {service} service reads its key from the `{env_var}` environment "
              "variable."),
         Fact(1, "{owner} is the security contact for {service}.")),
        (Extra("fabricated_detail", "Keys are rotated every {rotate_days} days, and the rotation "
               "job posts a notice in the #security channel.", 0),),
        (Extra("fabricated_detail", "Leaked keys are revoked automatically by secret scanning "
               "within a minute."),
         Extra("overgeneralization", "Every environment, including local development, uses the "
               "same rotation schedule."),
         Extra("attribution", "The security team has said `.env` files are fine as long as "
               "they're in `.gitignore`.")),
    ),
    Topic(
        "pii_logging", "code_assistant", "privacy", 0.20,
        {"field": ("among", "pii_field"), "redact_fn": ("pick", "redact_fn"),
         "retention": ("step", (7, 14, 30, 90), "dur"), "lib": ("pick", "log_lib")},
        (("Can I log the user's `{field}` when signup fails?", 0),
         ("How long do we keep application logs?", 2),
         ("Is there a helper to mask `{field}` in logs?", 1),
         ("Why don't I see debug logs in production?", 3),
         ("Do I need to strip `token` fields myself before logging?", 4)),
        (Doc("eng-handbook/observability/logging", "Logging guidelines. Personal data such as "
             "`{field}` must be masked before it is logged, using `{redact_fn}()` from the "
             "internal `obs` package. Application logs are retained for {retention} days. Debug "
             "logging is disabled in production."),
         Doc("obs/README.md", "The `obs` package configures `{lib}` with a JSON renderer and "
             "installs a processor that drops keys named `password` or `token`.")),
        (Fact(0, "You need to mask `{field}` before it goes into a log line.",
              (("negation", "It's fine to log `{field}` as long as the log level is INFO."),)),
         Fact(0, "Use `{redact_fn}()` from the `obs` package for the masking."),
         Fact(0, "Application logs are kept for {retention} days."),
         Fact(0, "Debug logging is disabled in production.",
              (("negation", "Debug logging stays enabled in production."),)),
         Fact(1, "Keys named `password` or `token` are dropped automatically by the `{lib}` "
              "processor that `obs` installs.")),
        (Extra("fabricated_detail", "Call `{redact_fn}()` before logging; it also hashes the "
               "value with SHA-256 so you can still join on it.", 0),),
        (Extra("fabricated_detail", "The `obs` package also ships a `scrub_all()` helper that "
               "masks every field automatically."),
         Extra("overgeneralization", "Masking is only required for EU users."),
         Extra("causal", "This rule exists because logs once leaked to a vendor during an "
               "incident."),
         Extra("fabricated_detail", 'Masked values show up as `<span class="redacted">` in the '
               "log viewer.")),
    ),
    Topic(
        "migrations", "code_assistant", "safety", 0.30,
        {"table": ("among", "table"), "batch": ("step", (500, 1000, 2000, 5000)),
         "lock_s": ("step", (2, 5, 10), "dur"), "backup_hours": ("dur", 1, 24),
         "window": ("pick", "window"), "approver": ("person",)},
        (("Can I drop a column from `{table}` in today's deploy?", 0),
         ("What batch size should I use to backfill `{table}`?", 2),
         ("When is the next maintenance window?", 4),
         ("Who can approve a destructive migration this week?", 5),
         ("What `lock_timeout` should my migration use?", 3)),
        (Doc("runbooks/db-migrations", "Migration runbook. Destructive migrations (DROP TABLE, "
             "dropping a column) need approval from a second engineer and a backup taken no more "
             "than {backup_hours} hours before. Backfills on large tables such as `{table}` run "
             "in batches of {batch} rows. Set `lock_timeout` to {lock_s} seconds."),
         Doc("oncall/calendar", "Next maintenance window: {window}. On-call approver: "
             "{approver}.")),
        (Fact(0, "Dropping a column counts as destructive, so a second engineer has to approve "
              "it.", (("negation", "Dropping a column doesn't need a second approval."),)),
         Fact(0, "Take a backup no more than {backup_hours} hours before you run it."),
         Fact(0, "Backfill `{table}` in batches of {batch} rows."),
         Fact(0, "Set `lock_timeout` to {lock_s} seconds."),
         Fact(1, "The next maintenance window is {window}."),
         Fact(1, "{approver} is the on-call approver.")),
        (Extra("fabricated_detail", "Backfill `{table}` in batches of {batch} rows with a 500 ms "
               "pause between batches.", 0),),
        (Extra("fabricated_detail", "Dropping a column is instant on our Postgres version, so it "
               "takes no lock."),
         Extra("overgeneralization", "Non-destructive migrations can run at any time without "
               "review."),
         Extra("attribution", "The DBA team recommends `pg_repack` for this."),
         Extra("fabricated_detail", "**Important:** the migration tool rolls back automatically "
               "if a batch fails.")),
    ),
)  # fmt: skip
