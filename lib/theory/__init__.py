"""The theory the chapters check, apart from what users call.

Privacy audits of Theorem 1 (:mod:`lib.theory.audit`), the utility bound of
Theorem 2 (:mod:`lib.theory.utility`), the counterexample of Appendix A
(:mod:`lib.theory.counterexample`), Geumlek et al.'s results as their paper
states them (:mod:`lib.theory.geumlek`) and the exact audit of the
smoothed-Hellinger mechanism (:mod:`lib.theory.hellinger_audit`).
"""
