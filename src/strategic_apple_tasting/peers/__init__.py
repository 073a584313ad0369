"""Peer libraries' contextual bandits as learners: MABWiser, river and Vowpal Wabbit.

Each adapter turns a library's two-arm contextual bandit policy (arm 1 accept, arm 0 reject)
into a :class:`~strategic_apple_tasting.learners.Learner`, using the library through its public
API as its users do. The rule it publishes each round is the rule the library decides by:
accept iff the library would choose arm 1 at the shown x', with a randomized policy's draws
frozen for the round, so agents game the rule actually used. None is aware of gaming.

The libraries are optional (``pip install 'strategic-apple-tasting[peers]'``); this package
imports without them, and an adapter whose library is missing says so in one line
(``ValueError``) when it is made. Registered names (entry points of the group
``strategic_apple_tasting.learners``):

=========================  ==================================================================
name                       class
=========================  ==================================================================
``mabwiser:LinUCB``        :class:`MABWiserLinUCB`
``mabwiser:LinTS``         :class:`MABWiserLinTS`
``mabwiser:LinGreedy``     :class:`MABWiserLinGreedy`
``river:LinUCBDisjoint``   :class:`RiverLinUCBDisjoint`
``vw:cb_explore_adf``      :class:`VWCBExploreADF`
=========================  ==================================================================

They run on the engine's Python reference path: g is the library's prediction, evaluated many
times a round by agents' numerical best response, so they cost milliseconds a round.
"""

from .mabwiser import MABWiserLinGreedy, MABWiserLinTS, MABWiserLinUCB
from .river import RiverLinUCBDisjoint
from .vowpalwabbit import VWCBExploreADF

#: Every adapter, by registered name.
PEERS = {cls.name: cls for cls in (MABWiserLinUCB, MABWiserLinTS, MABWiserLinGreedy,
                                   RiverLinUCBDisjoint, VWCBExploreADF)}

__all__ = ["PEERS", "MABWiserLinGreedy", "MABWiserLinTS", "MABWiserLinUCB", "RiverLinUCBDisjoint",
           "VWCBExploreADF"]
