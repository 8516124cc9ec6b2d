"""Acme's SAC losses (acme/agents/jax/sac/learning.py): alpha, critic and actor, transcribed small. The policy is
a tanh-squashed normal written in plain jnp (Acme's NormalTanhDistribution), sampled from a PRNG key."""

import jax
import jax.numpy as jnp

TARGET_ENTROPY = -2.0
DISCOUNT = 0.99
REWARD_SCALE = 1.0


def policy_apply(policy_params, obs):
  h = jnp.tanh(obs @ policy_params["torso"]["w"])
  loc = h @ policy_params["loc"]["w"]
  scale = jax.nn.softplus(h @ policy_params["scale"]["w"]) + 1e-3
  return loc, scale


def sample(dist_params, key):
  loc, scale = dist_params
  return jnp.tanh(loc + scale * jax.random.normal(key, loc.shape))


def log_prob(dist_params, action):
  loc, scale = dist_params
  pre = jnp.arctanh(jnp.clip(action, -1 + 1e-6, 1 - 1e-6))
  log_normal = -0.5 * ((pre - loc) / scale) ** 2 - jnp.log(scale) - 0.5 * jnp.log(2 * jnp.pi)
  log_det = 2.0 * (jnp.log(2.0) - pre - jax.nn.softplus(-2.0 * pre))
  return jnp.sum(log_normal - log_det, axis=-1)


def q_apply(q_params, obs, action):
  x = jnp.concatenate([obs, action], axis=-1)
  q1 = jax.nn.relu(x @ q_params["q1"]["w1"]) @ q_params["q1"]["w2"]
  q2 = jax.nn.relu(x @ q_params["q2"]["w1"]) @ q_params["q2"]["w2"]
  return jnp.concatenate([q1, q2], axis=-1)


def alpha_loss(log_alpha, policy_params, transitions, key):
  """Eq 18 from https://arxiv.org/pdf/1812.05905.pdf."""
  dist_params = policy_apply(policy_params, transitions["observation"])
  action = sample(dist_params, key)
  log_prob_ = log_prob(dist_params, action)
  alpha = jnp.exp(log_alpha)
  alpha_loss = alpha * jax.lax.stop_gradient(-log_prob_ - TARGET_ENTROPY)
  return jnp.mean(alpha_loss)


def critic_loss(q_params, policy_params, target_q_params, alpha, transitions, key):
  q_old_action = q_apply(q_params, transitions["observation"], transitions["action"])
  next_dist_params = policy_apply(policy_params, transitions["next_observation"])
  next_action = sample(next_dist_params, key)
  next_log_prob = log_prob(next_dist_params, next_action)
  next_q = q_apply(target_q_params, transitions["next_observation"], next_action)
  next_v = jnp.min(next_q, axis=-1) - alpha * next_log_prob
  target_q = jax.lax.stop_gradient(transitions["reward"] * REWARD_SCALE +
                                   transitions["discount"] * DISCOUNT * next_v)
  q_error = q_old_action - jnp.expand_dims(target_q, -1)
  q_loss = 0.5 * jnp.mean(jnp.square(q_error))
  return q_loss


def actor_loss(policy_params, q_params, alpha, transitions, key):
  dist_params = policy_apply(policy_params, transitions["observation"])
  action = sample(dist_params, key)
  log_prob_ = log_prob(dist_params, action)
  q_action = q_apply(q_params, transitions["observation"], action)
  min_q = jnp.min(q_action, axis=-1)
  actor_loss = alpha * log_prob_ - min_q
  return jnp.mean(actor_loss)


def _normal(seed, shape, scale=0.6):
  return jax.random.normal(jax.random.PRNGKey(seed), shape) * scale


def _policy(seed):
  return {"torso": {"w": _normal(seed, (3, 4))}, "loc": {"w": _normal(seed + 1, (4, 2))},
          "scale": {"w": _normal(seed + 2, (4, 2))}}


def _critic(seed):
  return {name: {"w1": _normal(seed + k, (5, 4)), "w2": _normal(seed + k + 1, (4, 1))}
          for k, name in ((0, "q1"), (2, "q2"))}


def _transitions():
  return {"observation": _normal(20, (3, 3), 1.0), "action": jnp.tanh(_normal(21, (3, 2), 1.0)),
          "reward": jnp.array([0.5, -1.0, 0.2]), "discount": jnp.array([1.0, 1.0, 0.0]),
          "next_observation": _normal(22, (3, 3), 1.0)}


def alpha_example():
  return (jnp.array(-0.3), _policy(1), _transitions(), jax.random.PRNGKey(5))


def critic_example():
  return (_critic(10), _policy(1), _critic(30), jnp.array(0.2), _transitions(), jax.random.PRNGKey(6))


def actor_example():
  return (_policy(1), _critic(10), jnp.array(0.2), _transitions(), jax.random.PRNGKey(7))
