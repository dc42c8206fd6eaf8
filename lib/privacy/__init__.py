"""What privacy is, independent of any mechanism.

The guarantees a release can carry (:mod:`lib.privacy.guarantees`), which are
also the targets a mechanism is calibrated to; the conversions between them
(:mod:`lib.privacy.accounting`); and the neighbouring histograms the
guarantees quantify over (:mod:`lib.privacy.neighbours`).
"""
