"""accounts: who acts. Users, roles, passwords and sessions, and the activity log every act is
recorded in (import, sample, claims, verdicts, ...), so it sits below every step package.

May import store/, traces/ and errors; never a step package.
"""
