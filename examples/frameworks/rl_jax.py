"""Losses of reinforcement learning in JAX: a TD target, an actor-critic, a hard Gumbel-softmax.

    gradlang --from-jax rl_jax:td_loss --shapes 'W=2,3 s=3 s2=3' --emit
"""

import jax
import jax.numpy as jnp

GAMMA = 0.9
REWARD = 1.0
ACTION = 1


def td_loss(W, s, s2):
    """Q-learning: the target r + gamma max_a Q(s2, a) is stopped."""
    q = W @ s
    target = REWARD + GAMMA * jnp.max(jax.lax.stop_gradient(W @ s2))
    return 0.5 * (target - q[ACTION]) ** 2


def actor_critic(theta, v, s, s2):
    """A one-step actor-critic: the advantage is stopped in the policy term."""
    value, next_value = jnp.dot(v, s), jnp.dot(v, s2)
    advantage = REWARD + GAMMA * jax.lax.stop_gradient(next_value) - value
    log_pi = jax.nn.log_softmax(theta @ s)[ACTION]
    return -log_pi * jax.lax.stop_gradient(advantage) + 0.5 * advantage ** 2


def gumbel_hard(logits, g, w):
    """Straight-through Gumbel-softmax: the forward value is one-hot, the gradient the soft sample's."""
    soft = jax.nn.softmax((logits + g) / 0.5)
    hard = jax.nn.one_hot(jnp.argmax(soft), soft.shape[0])
    sample = hard - jax.lax.stop_gradient(soft) + soft
    return jnp.sum(sample * w) ** 2


def simsiam(W, P, x1, x2):
    """SimSiam's symmetric loss: each branch's projection is stopped in the other's term."""
    z1, z2 = jnp.tanh(W @ x1), jnp.tanh(W @ x2)
    p1, p2 = P @ z1, P @ z2

    def d(p, z):
        z = jax.lax.stop_gradient(z)
        return -jnp.dot(p / jnp.linalg.norm(p), z / jnp.linalg.norm(z))

    return 0.5 * d(p1, z2) + 0.5 * d(p2, z1)


ACTIONS = jnp.array([0, 2, 1])


def dqn_batch(W, S, S2):
    """DQN over a batch: Q(s, a) read with the batch's actions (a gather), the max over next states stopped."""
    q = (S @ W.T)[jnp.arange(S.shape[0]), ACTIONS]
    target = REWARD + GAMMA * jax.lax.stop_gradient(jnp.max(S2 @ W.T, axis=1))
    return jnp.mean((q - target) ** 2)
