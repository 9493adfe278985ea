"""An independent, test-only reference implementation of Archipelago movement and combat.

Written from the spec (A10–A35, A43, A60–A64, A91–A106) without looking at the engine's resolver;
see :mod:`tests.engine.archipelago.reference.movement`.
"""

from tests.engine.archipelago.reference.movement import reference_resolve

__all__ = ["reference_resolve"]
