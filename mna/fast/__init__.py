"""Speed machinery, behind `mna.linalg`: the KLU binding (`klu`) and elimination orders
(`ordering`). Nothing else imports this package; what it changes in results (the order of
elimination) is chosen by ``.options ordering=``.
"""
