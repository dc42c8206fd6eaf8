"""Bridges to the accountants people already use: Google's dp-accounting and OpenDP.

Both are optional extras (``pip install "dirichlet-mechanism-book[interop]"``);
``import lib`` never imports them, and nothing else in :mod:`lib` imports this
package (it is the top layer: it may use every other one).

* :mod:`lib.interop.dp_accounting`: dp-accounting events for the Dirichlet
  mechanism (its exact Renyi curve) and for any guarantee of :mod:`lib` with a
  curve, and an RDP accountant that composes them with dp-accounting's own
  events (a Gaussian, DP-SGD steps).
* :mod:`lib.interop.opendp`: OpenDP measurements under the Renyi-divergence
  measure with the replace-one metric, composable with OpenDP's combinators.
"""
