"""A PPO clipped-surrogate loss in JAX: rlax's truncated_generalized_advantage_estimation (lax.scan, reverse) and
clipped_surrogate_pg_loss (jnp.clip, jnp.fmin), with a categorical policy and a value head on dict params."""

import jax
import jax.numpy as jnp


def truncated_generalized_advantage_estimation(r_t, discount_t, lambda_, values, stop_target_gradients=False):
  lambda_ = jnp.ones_like(discount_t) * lambda_  # If scalar, make into vector.

  delta_t = r_t + discount_t * values[1:] - values[:-1]

  # Iterate backwards to calculate advantages.
  def _body(acc, xs):
    deltas, discounts, lambda_ = xs
    acc = deltas + discounts * lambda_ * acc
    return acc, acc

  _, advantage_t = jax.lax.scan(
      _body, 0.0, (delta_t, discount_t, lambda_), reverse=True)

  return jax.lax.select(stop_target_gradients,
                        jax.lax.stop_gradient(advantage_t),
                        advantage_t)


def clipped_surrogate_pg_loss(prob_ratios_t, adv_t, epsilon, use_stop_gradient=True):
  adv_t = jax.lax.select(use_stop_gradient, jax.lax.stop_gradient(adv_t), adv_t)
  clipped_ratios_t = jnp.clip(prob_ratios_t, 1. - epsilon, 1. + epsilon)
  clipped_objective = jnp.fmin(prob_ratios_t * adv_t, clipped_ratios_t * adv_t)
  return -jnp.mean(clipped_objective)


def network(params, obs):
  h = jnp.tanh(obs @ params["torso"])
  return h @ params["pi"], (h @ params["v"])[:, 0]


def ppo_loss(params, obs, actions, behaviour_logp, rewards, discounts, clip_eps=0.2, vf_coef=0.5):
  logits, values = network(params, obs)
  advantages = truncated_generalized_advantage_estimation(rewards, discounts, 0.95, values)
  advantages = jax.lax.stop_gradient(advantages)
  targets = advantages + jax.lax.stop_gradient(values[:-1])
  advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
  logp = jnp.take_along_axis(jax.nn.log_softmax(logits[:-1]), actions[:, None], axis=-1)[:, 0]
  ratio = jnp.exp(logp - behaviour_logp)
  pg_loss = clipped_surrogate_pg_loss(ratio, advantages, clip_eps)
  value_loss = jnp.mean((values[:-1] - targets) ** 2)
  return pg_loss + vf_coef * value_loss


def example():
  k = jax.random.split(jax.random.PRNGKey(21), 5)
  params = {"torso": jax.random.normal(k[0], (3, 4)), "pi": jax.random.normal(k[1], (4, 3)),
            "v": jax.random.normal(k[2], (4, 1))}
  obs = jax.random.normal(k[3], (6, 3))
  return (params, obs, jnp.array([0, 1, 2, 1, 0]), jnp.array([-1.2, -0.9, -1.0, -1.3, -0.8]),
          jax.random.normal(k[4], (5,)), jnp.array([0.99, 0.99, 0.0, 0.99, 0.99]))
