"""The checking tools of the language reference, section 12: gradcheck, kink warnings, plot."""
